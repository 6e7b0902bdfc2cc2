package apipixtest

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// scopes are the OAuth2 scopes every token carries: all the routes the PSP has.
const scopes = "cob.write cob.read cobv.write cobv.read pix.write pix.read webhook.write webhook.read pix.send gn.pix.send.read"

// token is an issued access token.
type token struct {
	expires time.Time
	revoked bool // ExpireTokens
}

// tokenAnswer is the token route's answer (RFC 6749, 5.1).
type tokenAnswer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
}

// oauthError is the token route's error (RFC 6749, 5.2).
type oauthError struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description,omitempty"`
}

// ExpireTokens makes every token issued so far invalid: each is answered 401 from now
// on, as a token the PSP revoked or that expired early is.
func (p *PSP) ExpireTokens() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, t := range p.tokens {
		t.revoked = true
		p.tokens[k] = t
	}
}

// TokensIssued is how many access tokens the PSP has issued.
func (p *PSP) TokensIssued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokensIssued
}

// checkBasic authenticates the token route's caller by HTTP Basic client_id:
// client_secret. A request without Basic credentials breaks the standard; wrong ones
// are only refused.
func (p *PSP) checkBasic(c *call) bool {
	id, secret, ok := c.r.BasicAuth()
	if !ok {
		c.p.addViolation(c.r, []violation{{Razao: "the token call needs HTTP Basic authentication with the client credentials"}})
		c.w.Header().Set("WWW-Authenticate", `Basic realm="apipixtest"`)
		writeJSON(c.w, http.StatusUnauthorized, "application/json", oauthError{"invalid_client", "HTTP Basic client credentials are required"})
		return false
	}
	if subtle.ConstantTimeCompare([]byte(id), []byte(p.o.ClientID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(secret), []byte(p.o.ClientSecret)) != 1 {
		writeJSON(c.w, http.StatusUnauthorized, "application/json", oauthError{"invalid_client", "unknown client credentials"})
		return false
	}
	return true
}

// checkBearer authenticates a call of the API by its access token. A request without one
// breaks the standard; an unknown, expired or revoked one is only refused.
func (p *PSP) checkBearer(c *call) bool {
	h := c.r.Header.Get("Authorization")
	scheme, tok, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		c.p.addViolation(c.r, []violation{{Razao: "the call needs an Authorization: Bearer <access token> header", Valor: show(h)}})
		c.w.Header().Set("WWW-Authenticate", `Bearer realm="apipixtest"`)
		writeJSON(c.w, http.StatusUnauthorized, problemContentType, problemOf(errNaoAutorizado, nil))
		return false
	}
	now := p.now()
	p.mu.Lock()
	t, known := p.tokens[strings.TrimSpace(tok)]
	p.mu.Unlock()
	if !known || t.revoked || !now.Before(t.expires) {
		c.w.Header().Set("WWW-Authenticate", `Bearer realm="apipixtest", error="invalid_token"`)
		writeJSON(c.w, http.StatusUnauthorized, problemContentType, problemOf(errNaoAutorizado, []violation{{Razao: "the access token is unknown, expired or revoked"}}))
		return false
	}
	return true
}

// handleToken issues an access token for grant_type client_credentials, sent as JSON
// (Efí's form) or form-encoded (RFC 6749's).
func (p *PSP) handleToken(c *call) {
	grant, vs := grantType(c)
	if len(vs) > 0 {
		c.p.addViolation(c.r, vs)
		writeJSON(c.w, http.StatusBadRequest, "application/json", oauthError{"invalid_request", vs[0].String()})
		return
	}
	if grant != "client_credentials" {
		c.p.addViolation(c.r, []violation{{Razao: "grant_type must be client_credentials", Propriedade: "grant_type", Valor: grant}})
		writeJSON(c.w, http.StatusBadRequest, "application/json", oauthError{"unsupported_grant_type", "only client_credentials is supported"})
		return
	}
	var b [24]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	now := p.now()
	p.mu.Lock()
	p.tokens[tok] = token{expires: now.Add(p.o.TokenTTL)}
	p.tokensIssued++
	p.mu.Unlock()
	c.w.Header().Set("Cache-Control", "no-store")
	c.ok(http.StatusOK, tokenAnswer{AccessToken: tok, TokenType: "Bearer", ExpiresIn: int64(p.o.TokenTTL / time.Second), Scope: scopes})
}

// grantType reads the token request's grant_type, and what is wrong with the request.
func grantType(c *call) (string, []violation) {
	mt, _, _ := mime.ParseMediaType(c.r.Header.Get("Content-Type"))
	switch mt {
	case "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(c.body))
		if err != nil {
			return "", []violation{{Razao: "the form body does not parse: " + err.Error()}}
		}
		var vs []violation
		for k := range form {
			if k != "grant_type" && k != "scope" {
				vs = append(vs, violation{Razao: "is not a parameter of the token request", Propriedade: k})
			}
		}
		if !form.Has("grant_type") {
			vs = append(vs, violation{Razao: "is required", Propriedade: "grant_type"})
		}
		return form.Get("grant_type"), vs
	case "application/json":
		m, vs := decodeBody(c.r, c.body, "")
		if m == nil {
			return "", vs
		}
		var ck checker
		object(req("grant_type", text(100)), opt("scope", text(1000)))(&ck, "", m)
		return str(m, "grant_type"), append(vs, ck.v...)
	}
	return "", []violation{{Razao: "Content-Type must be application/json or application/x-www-form-urlencoded", Valor: c.r.Header.Get("Content-Type")}}
}
