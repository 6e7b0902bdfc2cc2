// Package httpadapter serves a payments.Service over HTTP with the OpenPix/Woovi REST API on
// the wire, so that existing integrations and the official SDKs work by changing only the
// base URL and the App ID.
//
// New returns an http.Handler to run on its own or mount on a host's mux. routes.go lists
// every route; each is served under /api/v1/... and under the legacy /api/<vendor>/v1/...
// prefix. Requests authenticate with `Authorization: <AppID>` (raw, no scheme): the App ID
// selects the company, and the handler acts only for it. A few routes are public: /health,
// the webhook public keys, the QR image PNG that qrCodeImage links point browsers at (see
// handleQRImagePublic), and the payment link page that paymentLinkUrl opens (paylink.go),
// which answers HTML.
//
// To mount the handler under a prefix beside the host's own routes, strip the prefix and
// put it in Options.BaseURL, the address clients and payers reach the handler at:
//
//	api := httpadapter.New(svc, httpadapter.Options{BaseURL: "https://shop.example/payments"})
//	mux.Handle("/payments/", http.StripPrefix("/payments", api))
//
// BaseURL makes the links records carry (paymentLinkUrl, qrCodeImage); the payment page
// names its QR image, status and simulate routes relative to its own URL, so it works under
// any prefix, and behind a proxy that forwards one, with nothing else to set. See
// Example (MountUnderPrefix).
//
// Every failure body is {"error": "<message>"} (a 401 adds the older "errors" form, the
// base64 image route adds "success": false); the status comes from one map of payments
// error codes. Request bodies are JSON objects of
// at most Options.MaxBodyBytes; unknown fields and query parameters are ignored.
package httpadapter

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/pixfoundry/payments"
)

// DefaultMaxBodyBytes is the largest request body accepted when Options.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 1 << 20

// DefaultMaxHeaderBytes is the largest request header accepted when Options.MaxHeaderBytes
// is 0.
const DefaultMaxHeaderBytes = 64 << 10

// Options configure the handler. The zero value works.
type Options struct {
	// Sandbox turns on the sandbox routes: GET /<vendor>/testing, which simulates a payer
	// paying a charge or a static QR code of the caller's company, and GET and POST
	// /<vendor>/testing/clock, which read and move Clock. A production deployment leaves it
	// off, and the routes then answer 404.
	Sandbox bool
	// Clock is the clock the sandbox's clock routes read and move: the Service's own
	// (payments.Options.Clock), typically a *payments.OffsetClock over the system clock.
	// It is one clock for the whole server: moving it moves time for every company. Nil
	// leaves the clock routes answering 501.
	Clock payments.MovableClock
	// Logger receives request failures and recovered panics; default discards them.
	Logger *slog.Logger
	// MaxBodyBytes caps request bodies; default DefaultMaxBodyBytes. A larger body is
	// answered 400 {"error":"request body too large (limit N bytes)"}.
	MaxBodyBytes int64
	// MaxHeaderBytes caps the request line and headers, counted as sent; default
	// DefaultMaxHeaderBytes. Larger ones are answered 431 {"error": ...} in JSON. It must be
	// below the http.Server's own MaxHeaderBytes (default 1 MiB): above that limit
	// net/http answers 431 itself, in plain text, before any handler runs.
	MaxHeaderBytes int
	// BaseURL is the public base URL of this server (e.g. "https://pix.example.com"): the
	// links records carry (paymentLinkUrl, qrCodeImage) are made from it, by the Links New
	// installs in the Service. Empty makes them paths ("/pay/<paymentLinkID>").
	BaseURL string
	// RequestLog, if set, gets one line per request at Info (request_id, method, route,
	// status, duration), and each request is answered with its id in X-Request-Id (see
	// requestlog.go); nil logs no requests and sets no id.
	RequestLog *slog.Logger
	// OnRequest, if set, is called after each request with its method, route, status and
	// duration (metrics by route); it runs on the request's goroutine and must be quick.
	OnRequest func(RequestInfo)
	// CORSOrigins are the web origins, scheme://host[:port] ("https://shop.example"), whose
	// pages may call the API from a browser with the App ID, as @openpix/react does. Their
	// preflights are answered 204 (the API's methods; Authorization, Content-Type and the
	// headers the official SDKs send; kept two hours), and the API's replies to them carry
	// Access-Control-Allow-Origin and expose X-Request-Id; another origin's preflight is
	// answered 403 {"error"}, and every API reply carries Vary: Origin. ["*"] allows every
	// origin, answered "*"; it is never implied, and goes alone. Credentials (cookies) are
	// never allowed: the App ID is a header. Empty, the default, sends no CORS header at
	// all, and a preflight is answered as any OPTIONS request is, 405, so browsers refuse
	// every cross-origin call. Only the API's routes take part (under /api/ and
	// /<vendor>/api/, and the sandbox's /<vendor>/testing...): the payment link page, the QR
	// images and /health are opened by the browser itself (a link, an <img>), which needs
	// no CORS. New panics on a list CheckCORSOrigins refuses. A page that holds an App ID
	// shows it to everyone who opens it, who may then act as the company: a public site
	// calls its own backend instead.
	CORSOrigins []string
	// WebhookIPs are the addresses this deployment's webhook deliveries leave from, as its
	// network makes them (the sender does not choose its source address), which GET
	// /webhook/ips lists so that receivers can allow them. IPv4 or IPv6 addresses, each
	// once (CheckWebhookIPs); New panics on a list it refuses. Empty, the default, lists
	// none: {"ips":[]}.
	WebhookIPs []string
}

// New returns the HTTP handler of the OpenPix-compatible API over svc. svc is used to
// authenticate App IDs (each request acts for the company its App ID belongs to) and for the
// public routes that find a record by its paymentLinkID whichever company owns it.
//
// New also installs in svc (payments.Service.SetLinks, for every company) the links of
// this handler's routes under opts.BaseURL, so that every record and event svc makes from
// then on carries paymentLinkUrl <BaseURL>/pay/<paymentLinkID> and qrCodeImage
// <BaseURL>/<vendor>/charge/brcode/image/<paymentLinkID>.png: call it before svc writes
// anything. One Service serves one adapter's links: a second New over it replaces them.
func New(svc *payments.Service, opts Options) http.Handler {
	return newHandler(svc, opts, nil)
}

// newHandler is New with extra routes for tests (a panicking handler, say).
func newHandler(svc *payments.Service, opts Options, extra func(*http.ServeMux)) http.Handler {
	allowOrigins, err := corsOrigins(opts.CORSOrigins)
	if err != nil {
		panic("httpadapter: Options.CORSOrigins: " + err.Error())
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxHeaderBytes <= 0 {
		opts.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	svc.SetLinks(links{base: opts.BaseURL, vendor: svc.Vendor()})
	mux := http.NewServeMux()
	apiPatterns, rootPatterns := addRoutes(mux, svc, opts)
	if extra != nil {
		extra(mux)
	}
	var h http.Handler = jsonMuxErrors(mux)
	h = allowMethods(allowedMethods(svc.Vendor(), apiPatterns, rootPatterns), h)
	h = checkQuery(h)
	h = limitBody(opts.MaxBodyBytes, h)
	h = limitHeaders(opts.MaxHeaderBytes, h)
	h = recoverPanics(opts.Logger, h)
	if len(opts.CORSOrigins) > 0 { // outside the limits: a page can read their refusals
		vendors := vendorNames(svc.Vendor())
		h = cors(allowOrigins, vendors, corsMethods(vendors, apiPatterns, rootPatterns), h)
	}
	if opts.RequestLog != nil || opts.OnRequest != nil {
		h = requestLog(opts.RequestLog, opts.OnRequest, h)
	}
	return h
}

// companyKey is the request-context key of the authenticated company's Service.
type companyKey struct{}

// requireAuth authenticates the request's App ID and puts the company's Service in the
// request context, where company finds it. A missing or invalid App ID is answered 401,
// and so are two Authorization headers: a proxy that read the other one would disagree
// with this server about who is calling. An authenticated reply is the company's own
// data: Cache-Control no-store keeps it out of shared caches.
func requireAuth(svc *payments.Service, log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth := r.Header.Values("Authorization")
			if len(auth) > 1 {
				auth = nil // two: whose? neither (nil is refused as a missing App ID)
			}
			co, err := svc.Authenticate(r.Context(), strings.TrimSpace(strings.Join(auth, "")))
			if err != nil {
				if payments.ErrorCode(err) == payments.EUNAUTHORIZED {
					err = &payments.Error{Code: payments.EUNAUTHORIZED, Message: "appID inválido"} // the real API's text
					w.Header().Set("X-Auth-Hint", authHint(r))
				}
				writeError(w, r, log, err)
				return
			}
			w.Header().Set("Cache-Control", "no-store")
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), companyKey{}, co)))
		})
	}
}

// authHint says, in the X-Auth-Hint header of a 401, what was wrong with the request's
// App ID: the body stays the real API's "appID inválido", the same for every mistake,
// which leaves a newcomer guessing. It never says whether an App ID exists.
func authHint(r *http.Request) string {
	auth := r.Header.Values("Authorization")
	scheme, _, spaced := strings.Cut(strings.TrimSpace(strings.Join(auth, "")), " ")
	switch {
	case len(auth) > 1:
		return "send one Authorization header, not " + strconv.Itoa(len(auth))
	case len(auth) == 0 && (r.Header.Get("X-Api-Key") != "" || r.Header.Get("Api-Key") != "" || r.Header.Get("AppID") != ""):
		return "the App ID goes in the Authorization header, as it is: Authorization: <App ID>"
	case len(auth) == 0 || strings.TrimSpace(auth[0]) == "":
		return "no App ID: send it in the Authorization header, as it is: Authorization: <App ID>"
	case spaced && (strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "Basic") || strings.EqualFold(scheme, "AppID")):
		return "send the App ID as it is, without \"" + scheme + " \": Authorization: <App ID>"
	}
	return "this App ID is not valid on this server: it may be mistyped, deleted, or from another server"
}

// company is the Service of the request's authenticated company. A route that calls it
// without requireAuth is a bug: it panics (answered 500) rather than act for anyone else.
func company(r *http.Request) *payments.Service {
	co, ok := r.Context().Value(companyKey{}).(*payments.Service)
	if !ok {
		panic("httpadapter: " + r.Pattern + " is not behind requireAuth")
	}
	return co
}

// limitHeaders answers 431 {"error"} when the request line and headers, counted as sent
// (name, ": ", value and CRLF for each), take more than max bytes.
func limitHeaders(max int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4 + len("Host: ") + len(r.Host) + 2
		for name, values := range r.Header {
			for _, v := range values {
				n += len(name) + len(v) + 4
			}
		}
		if n > max {
			w.Header().Set("Connection", "close")
			encode(w, http.StatusRequestHeaderFieldsTooLarge, errorBody{Error: fmt.Sprintf("request header fields too large (limit %d bytes)", max)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkQuery answers 400 {"error"} for a query string that does not parse (a bad
// percent-encoding, a ";" separator), which r.URL.Query would silently cut short, dropping
// the filter it carried.
func checkQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.RawQuery; q != "" {
			if _, err := url.ParseQuery(q); err != nil {
				encode(w, http.StatusBadRequest, errorBody{Error: "the query string is malformed: " + err.Error()})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// allowMethods answers 405 {"error":"method not allowed"}, with the Allow header, a method
// other than allow[path] on a path that is a route of its own (no wildcard). Without it, a
// wildcard route of that method would take the path for an id: GET
// /subaccount/transfer would look up a subaccount whose Pix key is "transfer".
func allowMethods(allow map[string]string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if methods, ok := allow[r.URL.Path]; ok && !allows(methods, r.Method) {
			w.Header().Set("Allow", methods)
			encode(w, http.StatusMethodNotAllowed, errorBody{Error: "method not allowed"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// allows reports whether the Allow header value methods lists method.
func allows(methods, method string) bool {
	for m := range strings.SplitSeq(methods, ", ") {
		if m == method {
			return true
		}
	}
	return false
}

// limitBody caps the request body at max bytes; decode reports the excess. A body whose
// Content-Length says it is over the cap is refused at once, before any of it is read
// (and before a client that sent Expect: 100-continue sends it). So is a body sent with a
// Content-Encoding (gzip, say): it is not decoded, and read as it is it would be refused
// as not JSON, or taken whole when the header was wrong.
func limitBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			w.Header().Set("Connection", "close") // the body is not read
			encode(w, http.StatusBadRequest, errorBody{Error: fmt.Sprintf("request body too large (limit %d bytes)", max)})
			return
		}
		if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") && r.ContentLength != 0 {
			encode(w, http.StatusBadRequest, errorBody{Error: fmt.Sprintf("request body with Content-Encoding %q is not accepted: send it uncompressed", ce)})
			return
		}
		if r.Body != http.NoBody { // net/http's body of a request that has none: nothing to bound
			r.Body = http.MaxBytesReader(w, r.Body, max)
		}
		next.ServeHTTP(w, r)
	})
}

// recoverPanics turns a panic in a handler into a logged 500 {"error":"internal error"}.
func recoverPanics(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler { // the server handles this sentinel itself
				panic(p)
			}
			log.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			encode(w, http.StatusInternalServerError, errorBody{Error: "internal error"})
		}()
		next.ServeHTTP(w, r)
	})
}

// jsonMuxErrors makes the mux's own replies JSON: its 404 for unknown routes becomes
// {"error":"not found"}, its 405 {"error":"method not allowed"} (keeping Allow), and its
// redirects to a cleaned path carry {} instead of HTML. It recognises them as replies with
// a status of 300 or more whose Content-Type is not JSON: every handler of ours replies
// through encode, which sets JSON first.
//
// Mounted under a prefix (http.StripPrefix), the mux's redirect names the path without it;
// the guard puts back what was stripped, so the redirect stays under the prefix.
func jsonMuxErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&jsonGuard{ResponseWriter: w, prefix: strippedPrefix(r)}, r)
	})
}

// strippedPrefix is the part of the path the client sent that is not in r's path: what a
// host's http.StripPrefix took off ("/payments"), or "" when the adapter is at the root.
func strippedPrefix(r *http.Request) string {
	sent, _, _ := strings.Cut(r.RequestURI, "?")
	prefix, ok := strings.CutSuffix(sent, r.URL.EscapedPath())
	if !ok || !strings.HasPrefix(prefix, "/") {
		return ""
	}
	return prefix
}

// jsonGuard replaces a non-JSON reply of status 300 or more with a JSON one.
type jsonGuard struct {
	http.ResponseWriter
	prefix   string // what the host stripped from the path (strippedPrefix)
	replaced bool   // the original body is dropped
}

func (g *jsonGuard) WriteHeader(status int) {
	h := g.Header()
	if status < 300 || strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		g.ResponseWriter.WriteHeader(status)
		return
	}
	g.replaced = true
	h.Del("Content-Length")
	if loc := h.Get("Location"); g.prefix != "" && strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") {
		h.Set("Location", g.prefix+loc) // the mux's redirect, under the host's prefix
	}
	var body any
	switch {
	case status < 400:
		body = struct{}{}
	case status == http.StatusNotFound:
		body = errorBody{Error: "not found"}
	default:
		body = errorBody{Error: strings.ToLower(http.StatusText(status))}
	}
	encode(g.ResponseWriter, status, body)
}

func (g *jsonGuard) Write(b []byte) (int, error) {
	if g.replaced {
		return len(b), nil
	}
	return g.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer (Flush, deadlines).
func (g *jsonGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }
