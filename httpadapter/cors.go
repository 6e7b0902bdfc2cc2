package httpadapter

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// corsMaxAge is how long, in seconds, a browser may keep a preflight's answer: two hours,
// the most Chromium keeps one (Firefox keeps up to a day).
const corsMaxAge = "7200"

// corsAllowHeaders are the request headers a page may send: the App ID (Authorization),
// Content-Type (application/json is not one a page may send without a preflight), those
// the official SDKs add (Accept from @openpix/react; User-Agent from @woovi/node-sdk,
// which browsers other than Chromium let a script set), and the two this server reads
// besides (Idempotency-Key, X-Request-Id).
const corsAllowHeaders = "Authorization, Content-Type, Accept, User-Agent, " + IdempotencyKeyHeader + ", " + RequestIDHeader

// corsExposeHeaders are the reply headers a page's script may read besides the
// always-readable ones (Content-Type, Cache-Control...): the request id, to quote in a
// support request.
const corsExposeHeaders = RequestIDHeader

// corsAny is the Options.CORSOrigins entry that allows every origin.
const corsAny = "*"

// CheckCORSOrigins reports whether origins is a valid Options.CORSOrigins: either the
// single entry "*", or web origins as a browser sends them in its Origin header,
// http(s)://host[:port] with no path (not even "/"), query or credentials; a host beyond
// ASCII written in its punycode form (xn--...). Letter case and a default port (:443 for
// https, :80 for http) do not matter. The error names the entry at fault.
func CheckCORSOrigins(origins []string) error {
	_, err := corsOrigins(origins)
	return err
}

// corsOrigins checks origins (see CheckCORSOrigins) and returns the set of allowed
// origins in the form browsers send them, or nil for "*".
func corsOrigins(origins []string) (map[string]bool, error) {
	if slices.Contains(origins, corsAny) {
		if len(origins) > 1 {
			return nil, errors.New(`"*" allows every origin and goes alone, without other origins`)
		}
		return nil, nil
	}
	set := make(map[string]bool, len(origins))
	for _, o := range origins {
		canon, err := corsOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("%q %v", o, err)
		}
		set[canon] = true
	}
	return set, nil
}

// corsOrigin returns s, a web origin, as a browser serializes it in its Origin header:
// scheme and host in lower case, no default port.
func corsOrigin(s string) (string, error) {
	if s == "" {
		return "", errors.New("is empty: name an origin such as https://shop.example")
	}
	if strings.ContainsAny(s, " \t\"<>\\^`{|}") || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", errors.New("must not contain spaces, quotes or other characters a URL escapes")
	}
	if strings.IndexFunc(s, func(r rune) bool { return r > unicode.MaxASCII }) >= 0 {
		return "", errors.New("must be plain ASCII: write the host in its punycode form (xn--...), as browsers send it")
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", errors.New("is not an origin: write scheme://host[:port], e.g. https://shop.example")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("must start with http:// or https://")
	case u.Opaque != "" || u.Hostname() == "":
		return "", errors.New("must name a host: scheme://host[:port], e.g. https://shop.example")
	case u.User != nil:
		return "", errors.New("must not carry credentials")
	case u.Path != "" || u.RawPath != "":
		return "", errors.New("must have no path, not even a final \"/\": an origin is scheme://host[:port]")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#"):
		return "", errors.New("must not have a query or a fragment")
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", errors.New("must have a port from 1 to 65535")
		}
		if !(u.Scheme == "https" && n == 443 || u.Scheme == "http" && n == 80) {
			host += ":" + strconv.Itoa(n)
		}
	}
	return u.Scheme + "://" + host, nil
}

// corsPath reports whether path is one of the API's, which CORS applies to: everything
// under /api/, and the routes outside it that take the App ID as well, the sandbox's
// /<vendor>/testing... (a page in a sandbox simulates its payments) and the webhook
// routes under /<vendor>/api/. The payment link page, the QR images and /health are not:
// a browser opens them itself (a link, an <img>), which needs no CORS.
func corsPath(vendors []string, path string) bool {
	if strings.HasPrefix(path, "/api/") {
		return true
	}
	for _, v := range vendors {
		if rest, ok := strings.CutPrefix(path, "/"+v+"/"); ok &&
			(rest == "testing" || strings.HasPrefix(rest, "testing/") || strings.HasPrefix(rest, "api/")) {
			return true
		}
	}
	return false
}

// corsMethods is the value of Access-Control-Allow-Methods: the methods of the routes
// registered under the API's paths, sorted, HEAD with GET.
func corsMethods(vendors, apiPatterns, rootPatterns []string) string {
	var methods []string
	add := func(pattern string) {
		method, _, _ := strings.Cut(pattern, " ")
		methods = append(methods, method)
		if method == http.MethodGet {
			methods = append(methods, http.MethodHead)
		}
	}
	for _, p := range apiPatterns {
		add(p) // served under /api/v1 and /api/<vendor>/v1
	}
	for _, p := range rootPatterns {
		if _, path, _ := strings.Cut(p, " "); corsPath(vendors, path) {
			add(p)
		}
	}
	slices.Sort(methods)
	return strings.Join(slices.Compact(methods), ", ")
}

// cors lets a web page of another origin call the API with the App ID from a browser, as
// @openpix/react does (fetch with Authorization and Content-Type: application/json, which
// the browser asks about first with a preflight OPTIONS request). New installs it only
// when Options.CORSOrigins names origins; it acts on the API's paths only (corsPath):
//
//   - a preflight (OPTIONS with Origin and Access-Control-Request-Method) from an allowed
//     origin is answered 204 with Access-Control-Allow-Origin, -Methods (the methods of
//     routes.go's API routes), -Headers (corsAllowHeaders) and -Max-Age (corsMaxAge);
//   - a preflight from any other origin is answered 403 {"error"}, without CORS headers,
//     so the browser refuses the call and the page's developer can read why;
//   - any other request from an allowed origin is served as usual, and its reply carries
//     Access-Control-Allow-Origin and Access-Control-Expose-Headers: X-Request-Id;
//   - every reply carries Vary: Origin, since what it says depends on the Origin.
//
// Credentials (cookies) are never allowed: the App ID is a header, not a cookie. With
// ["*"] the allowed origin is answered as "*", and any page may call the API; only the App
// ID then says who may act.
//
// allowed holds the origins (nil: every origin); methods is the Access-Control-Allow-Methods
// value (corsMethods). Paths other than the API's go to next untouched.
func cors(allowed map[string]bool, vendors []string, methods string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !corsPath(vendors, r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		var origin string
		if o := r.Header.Values("Origin"); len(o) == 1 { // two: whose? neither
			origin = o[0]
		}
		ok := origin != "" && (allowed == nil || allowed[origin])
		allowOrigin := origin
		if allowed == nil {
			allowOrigin = corsAny
		}
		if r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != "" {
			if !ok {
				encode(w, http.StatusForbidden, errorBody{Error: "Origin not allowed: this server's CORS origins do not include the origin of the calling page"})
				return
			}
			h.Set("Access-Control-Allow-Origin", allowOrigin)
			h.Set("Access-Control-Allow-Methods", methods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if ok {
			h.Set("Access-Control-Allow-Origin", allowOrigin)
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		}
		next.ServeHTTP(w, r)
	})
}
