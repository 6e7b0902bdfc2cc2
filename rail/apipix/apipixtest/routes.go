package apipixtest

import (
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
)

// maxBody is the largest request body the PSP reads.
const maxBody = 1 << 20

// authKind is how a route authenticates its caller (on top of mutual TLS).
type authKind int

const (
	authBearer authKind = iota // an OAuth2 access token
	authBasic                  // the client credentials: the token route
)

// route is one path of the PSP and what each method on it does.
type route struct {
	pattern string // a ServeMux path pattern, without method
	auth    authKind
	efi     bool // Efí's extension: its schema errors are Efí's bodies
	methods map[string]func(*call)
}

// routes is every path the PSP serves: the API Pix under /v2, Efí's send extension
// (outside the standard's base path, as on Efí's host) and the token route.
func (p *PSP) routes() []route {
	return []route{
		{"/oauth/token", authBasic, false, map[string]func(*call){"POST": p.handleToken}},

		{"/v2/cob/{txid}", authBearer, false, map[string]func(*call){
			"PUT": p.handleChargePut(kindCob), "GET": p.handleChargeGet(kindCob), "PATCH": p.handleChargePatch(kindCob)}},
		{"/v2/cobv/{txid}", authBearer, false, map[string]func(*call){
			"PUT": p.handleChargePut(kindCobV), "GET": p.handleChargeGet(kindCobV), "PATCH": p.handleChargePatch(kindCobV)}},

		{"/v2/pix", authBearer, false, map[string]func(*call){"GET": p.handlePixList}},
		{"/v2/pix/{e2eid}", authBearer, false, map[string]func(*call){"GET": p.handlePixGet}},
		{"/v2/pix/{e2eid}/devolucao/{id}", authBearer, false, map[string]func(*call){
			"PUT": p.handleRefundPut, "GET": p.handleRefundGet}},

		{"/v2/webhook/{chave}", authBearer, false, map[string]func(*call){
			"PUT": p.handleWebhookPut, "GET": p.handleWebhookGet, "DELETE": p.handleWebhookDelete}},

		{"/v3/gn/pix/{idEnvio}", authBearer, true, map[string]func(*call){"PUT": p.handleSendPut}},
		{"/v2/gn/pix/enviados/id-envio/{idEnvio}", authBearer, true, map[string]func(*call){"GET": p.handleSendGetByID}},
		{"/v2/gn/pix/enviados/{e2eId}", authBearer, true, map[string]func(*call){"GET": p.handleSendGetByE2E}},
	}
}

// handler is the PSP's whole HTTP surface: the routes, and a 404 for every other path.
func (p *PSP) handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range p.routes() {
		mux.Handle(rt.pattern, p.serve(rt))
	}
	// The payload locations the BR Codes carry are a route of the standard (CobPayload,
	// for the payer's PSP) the PSP does not serve: no violation to ask for one.
	mux.HandleFunc("/qr/", func(w http.ResponseWriter, r *http.Request) {
		(&call{p: p, w: w, r: r}).refuse(errCobPayloadNaoEncontrado)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c := &call{p: p, w: w, r: r}
		c.reject(errNaoEncontrado, []violation{{Razao: "the standard has no such path"}})
	})
	return mux
}

// serve runs a request through its route: method, body size, authentication, counting,
// the faults FailNext and LoseNext asked for, and then the route's handler.
func (p *PSP) serve(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &call{p: p, w: w, r: r, efi: rt.efi}
		h, ok := rt.methods[r.Method]
		if !ok {
			allowed := make([]string, 0, len(rt.methods))
			for m := range rt.methods {
				allowed = append(allowed, m)
			}
			sort.Strings(allowed)
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			c.efi = false
			c.reject(errMetodoNaoPermitido, []violation{{Razao: "the method is not one of " + strings.Join(allowed, ", ")}})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				c.efi = false
				c.reject(errCorpoGrandeDemais, []violation{{Razao: "the body is larger than 1 MiB"}})
			}
			return // the connection broke: nobody to answer
		}
		c.body = body
		switch rt.auth {
		case authBasic:
			if !p.checkBasic(c) {
				return
			}
		case authBearer:
			if !p.checkBearer(c) {
				return
			}
		}
		p.mu.Lock()
		p.seen = append(p.seen, seenRequest{r.Method, r.URL.Path})
		p.mu.Unlock()

		if hold := p.takeHold(r); hold != nil {
			c.w = discard{header: http.Header{}}
			h(c)
			close(hold.acted)
			select { // no answer until released, or the client is gone
			case <-hold.release:
			case <-r.Context().Done():
			}
			hangUp(w)
			return
		}
		status, lose := p.takeFault(r)
		switch {
		case status != 0:
			writeJSON(w, status, problemContentType, statusProblem(status))
		case lose:
			c.w = discard{header: http.Header{}}
			h(c)
			hangUp(w)
		default:
			h(c)
		}
	})
}

// hangUp closes the connection of w without an answer.
func hangUp(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// net/http's own way to end a response by dropping its connection; it recovers it.
	panic(http.ErrAbortHandler)
}

// discard is a ResponseWriter that forgets the answer: the handler of a lost request
// acts and writes to nobody.
type discard struct{ header http.Header }

func (d discard) Header() http.Header       { return d.header }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
