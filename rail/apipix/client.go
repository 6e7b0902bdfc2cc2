package apipix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxAnswer is the largest answer body the Driver reads (a page of 1000 Pix fits).
const maxAnswer = 8 << 20

// Error is an error answer of the PSP: an RFC 7807 problem, as the API Pix gives, or an
// Efí {nome, mensagem} body. Callers branch on Status and Type (or Name), never on the
// texts.
type Error struct {
	// Method and Path are the call that got the answer.
	Method, Path string
	// Status is the HTTP status of the answer.
	Status int
	// Type, Title and Detail are the RFC 7807 fields; Type is a URI such as
	// "https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida" (see TypeName).
	Type, Title, Detail string
	// Violations are the problem's violacoes: which property broke which rule.
	Violations []Violation
	// Name and Message are Efí's nome and mensagem.
	Name, Message string
}

// Violation is one of an RFC 7807 problem's violacoes.
type Violation struct {
	Reason   string `json:"razao"`
	Property string `json:"propriedade"`
	Value    string `json:"valor"`
}

// TypeName is the last segment of Type ("CobOperacaoInvalida"), or Name for an Efí body.
func (e *Error) TypeName() string {
	if e.Type != "" {
		return e.Type[strings.LastIndex(e.Type, "/")+1:]
	}
	return e.Name
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apipix: %s %s: the PSP answered %d", e.Method, e.Path, e.Status)
	if n := e.TypeName(); n != "" {
		b.WriteString(" " + n)
	}
	if s := e.describe(); s != "" {
		b.WriteString(": " + s)
	}
	return b.String()
}

// describe is the PSP's own words in the answer: detail (or title), mensagem, and the
// violations.
func (e *Error) describe() string {
	var parts []string
	switch {
	case e.Detail != "":
		parts = append(parts, e.Detail)
	case e.Title != "":
		parts = append(parts, e.Title)
	}
	if e.Message != "" {
		parts = append(parts, e.Message)
	}
	for _, v := range e.Violations {
		s := v.Property + ": " + v.Reason
		if v.Value != "" {
			s += " (" + v.Value + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// redact replaces secret in every text of e.
func (e *Error) redact(secret string) {
	r := strings.NewReplacer(secret, "[redacted]")
	e.Type, e.Title, e.Detail = r.Replace(e.Type), r.Replace(e.Title), r.Replace(e.Detail)
	e.Name, e.Message = r.Replace(e.Name), r.Replace(e.Message)
	for i := range e.Violations {
		v := &e.Violations[i]
		v.Reason, v.Property, v.Value = r.Replace(v.Reason), r.Replace(v.Property), r.Replace(v.Value)
	}
}

// asError returns the *Error err carries, if any.
func asError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// isStatus reports whether err is an answer of the PSP with one of statuses.
func isStatus(err error, statuses ...int) bool {
	e, ok := asError(err)
	if !ok {
		return false
	}
	for _, s := range statuses {
		if e.Status == s {
			return true
		}
	}
	return false
}

// notFound reports whether err is the PSP's 404.
func notFound(err error) bool { return isStatus(err, http.StatusNotFound) }

// rejected reports whether err is an answer saying the PSP did not take the request as
// sent: 400 or 422, the statuses the standard and Efí give for a request refused on its
// content or on the state of what it names, or 409 (a conflict with what the PSP has).
// Whether the PSP did anything at all is read back by the caller. A 404 is left out: to a
// PUT it says the route or what it names is unknown, which only the caller can tell
// apart.
func rejected(err error) bool {
	return isStatus(err, http.StatusBadRequest, http.StatusConflict, http.StatusUnprocessableEntity)
}

// problem is the body of an error answer: RFC 7807 and Efí's fields together.
type problem struct {
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Status     int         `json:"status"`
	Detail     string      `json:"detail"`
	Violacoes  []Violation `json:"violacoes"`
	Nome       string      `json:"nome"`
	Mensagem   string      `json:"mensagem"`
	ErrorDescr string      `json:"error_description"` // OAuth2's, at the token URL
}

// errorOf makes the *Error of an answer with status and body.
func errorOf(method, path string, status int, body []byte) *Error {
	e := &Error{Method: method, Path: path, Status: status}
	var p problem
	if json.Unmarshal(body, &p) == nil {
		e.Type, e.Title, e.Detail, e.Violations = p.Type, p.Title, p.Detail, p.Violacoes
		e.Name, e.Message = p.Nome, p.Mensagem
		if e.Detail == "" {
			e.Detail = p.ErrorDescr
		}
	}
	return e
}

// Do makes one call to the PSP: method on url (absolute: BaseURL or Origin followed by
// a path), with in (if not nil) as its JSON body, decoding a 2xx answer's JSON body into
// out (if not nil). It goes over the Driver's mutual-TLS client with a bearer token,
// fetched on first need and shared by concurrent callers; a 401 gets a new token and the
// call is made once more. An error answer is an *Error; a context that ended is an error
// that wraps ctx.Err(); anything else (a lost connection, a timeout) is an error whose
// outcome is unknown. Do is exported so that a Sender for another PSP can be written
// outside this package.
func (d *Driver) Do(ctx context.Context, method, url string, in, out any) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("apipix: %s %s: %w", method, pathOf(url), err)
		}
	}
	tok, err := d.token(ctx, "")
	if err != nil {
		return err
	}
	status, answer, err := d.call(ctx, method, url, body, tok)
	if err == nil && status == http.StatusUnauthorized {
		// The token may have been revoked or expired early: one new token, one more try.
		if tok, err = d.token(ctx, tok); err != nil {
			return err
		}
		status, answer, err = d.call(ctx, method, url, body, tok)
	}
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return errorOf(method, pathOf(url), status, answer)
	}
	if out == nil || len(bytes.TrimSpace(answer)) == 0 {
		if out != nil {
			return fmt.Errorf("apipix: %s %s: the PSP answered %d with no body", method, pathOf(url), status)
		}
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("apipix: %s %s: the PSP's answer is not the JSON expected: %w", method, pathOf(url), err)
	}
	return nil
}

// call sends one request with the bearer token tok and reads the answer.
func (d *Driver) call(ctx context.Context, method, url string, body []byte, tok string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("apipix: %s %s: %w", method, pathOf(url), err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return d.roundTrip(ctx, req)
}

// roundTrip sends req and reads the answer's status and body.
func (d *Driver) roundTrip(ctx context.Context, req *http.Request) (int, []byte, error) {
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, nil, d.transportError(ctx, req, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return 0, nil, d.transportError(ctx, req, err)
	}
	if len(answer) > maxAnswer {
		return 0, nil, fmt.Errorf("apipix: %s %s: the PSP's answer is longer than %d bytes", req.Method, req.URL.Path, maxAnswer)
	}
	return resp.StatusCode, answer, nil
}

// transportError describes a call that got no answer: the context's error when it ended
// (wrapped, for errors.Is), else the transport's. Neither says whether the PSP acted.
func (d *Driver) transportError(ctx context.Context, req *http.Request, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("apipix: %s %s: %w", req.Method, req.URL.Path, cerr)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err // its text repeats the URL
	}
	return fmt.Errorf("apipix: %s %s: no answer from the PSP: %w", req.Method, req.URL.Path, err)
}

// pathOf is the path of an absolute URL, for error messages.
func pathOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Path != "" {
		return u.Path
	}
	return raw
}

// tokenAnswer is the token URL's answer.
type tokenAnswer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
}

// defaultTokenTTL is how long a token whose answer gives no expires_in is kept.
const defaultTokenTTL = time.Minute

// token returns a bearer token: the cached one unless it is stale (the token a call was
// just refused with) or due for renewal, else a new one. Concurrent callers that need a
// new token wait for one fetch.
func (d *Driver) token(ctx context.Context, stale string) (string, error) {
	d.tokMu.Lock()
	for {
		if d.tok != "" && d.tok != stale && d.now().Before(d.tokRenew) {
			tok := d.tok
			d.tokMu.Unlock()
			return tok, nil
		}
		if d.tokPending == nil {
			break
		}
		wait := d.tokPending
		d.tokMu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return "", ctxErr(ctx)
		}
		d.tokMu.Lock()
	}
	done := make(chan struct{})
	d.tokPending = done
	d.tokMu.Unlock()

	ans, err := d.fetchToken(ctx)

	d.tokMu.Lock()
	defer d.tokMu.Unlock()
	d.tokPending = nil
	close(done)
	if err != nil {
		return "", err
	}
	ttl := time.Duration(ans.ExpiresIn) * time.Second
	if ans.ExpiresIn <= 0 {
		ttl = defaultTokenTTL
	}
	margin := min(ttl/10, time.Minute) // renewed a little before it expires
	d.tok, d.tokRenew = ans.AccessToken, d.now().Add(ttl-margin)
	return d.tok, nil
}

// Token request bodies. The standard's security scheme is OAuth2's client credentials
// grant, whose request (RFC 6749 §4.4.2) is form-encoded; Efí documents a JSON body
// instead. fetchToken sends the form first and, if the PSP answers it 400 or 415 (a body
// it does not read), the JSON, and keeps to the one that worked.
const (
	tokenForm = "grant_type=client_credentials"
	tokenJSON = `{"grant_type":"client_credentials"}`
)

// fetchToken asks the token URL for a token with the client credentials: HTTP Basic auth
// and the grant in the body the PSP reads (see tokenForm), over the mutual-TLS client.
func (d *Driver) fetchToken(ctx context.Context) (tokenAnswer, error) {
	useJSON := d.tokenJSON.Load()
	status, body, path, err := d.postToken(ctx, useJSON)
	if err == nil && !useJSON && (status == http.StatusBadRequest || status == http.StatusUnsupportedMediaType) {
		if s, b, p, jerr := d.postToken(ctx, true); jerr == nil && s >= 200 && s <= 299 {
			d.tokenJSON.Store(true)
			status, body, path = s, b, p
		}
	}
	if err != nil {
		return tokenAnswer{}, err
	}
	return d.tokenAnswer(status, body, path)
}

// postToken makes one token request, with the JSON body or the form.
func (d *Driver) postToken(ctx context.Context, useJSON bool) (status int, body []byte, path string, err error) {
	payload, ctype := tokenForm, "application/x-www-form-urlencoded"
	if useJSON {
		payload, ctype = tokenJSON, "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.tokenURL, strings.NewReader(payload))
	if err != nil {
		return 0, nil, "", fmt.Errorf("apipix: token: %w", err)
	}
	req.SetBasicAuth(d.clientID, d.clientSecret)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Accept", "application/json")
	status, body, err = d.roundTrip(ctx, req)
	return status, body, req.URL.Path, err
}

// tokenAnswer reads the token endpoint's answer.
func (d *Driver) tokenAnswer(status int, body []byte, path string) (tokenAnswer, error) {
	if status < 200 || status > 299 {
		e := errorOf(http.MethodPost, path, status, body)
		e.redact(d.clientSecret)
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			return tokenAnswer{}, fmt.Errorf("apipix: the PSP refused the client credentials: %w", e)
		}
		return tokenAnswer{}, e
	}
	var ans tokenAnswer
	if err := json.Unmarshal(body, &ans); err != nil || ans.AccessToken == "" {
		return tokenAnswer{}, fmt.Errorf("apipix: POST %s: the PSP's answer has no access_token", path)
	}
	if ans.TokenType != "" && !strings.EqualFold(ans.TokenType, "bearer") {
		return tokenAnswer{}, fmt.Errorf("apipix: POST %s: token_type %q is not Bearer", path, ans.TokenType)
	}
	return ans, nil
}
