package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/rail/apipix"
)

// The real bank: a PSP of the Central Bank's API Pix (rail/apipix), -rail apipix.
//
// The company's account at the PSP gives a client id and secret, a client certificate and
// its key (mutual TLS on every call), and a registered Pix key (-psp-pix-key). With them:
//
//   - every DYNAMIC and OVERDUE charge a client creates is registered with the PSP (its cob
//     or cobv; payments.Options.BankCharges), and its BR Code is the PSP's;
//   - at start the server registers its webhook with the PSP (PUT /webhook/{key}), at
//     <base-url>/psp/webhook?hmac=<-psp-webhook-secret>&ignorar= (Efí's convention: the PSP
//     appends "/pix" to the URL, which lands in the ignored parameter), and serves
//     POST /psp/webhook and /psp/webhook/pix: a wrong or missing hmac is 401 and records
//     nothing; the answer is 200 only once the Pix are committed;
//   - every -psp-reconcile it lists what the PSP received over a window overlapping the
//     last one and records what the webhook missed (Service.Reconcile); the operator
//     listener's POST /psp/reconcile runs one at once;
//   - refunds go out as the standard's devoluções, payments and withdrawals through the
//     PSP's sending extension (-psp-send efi: Efí's), settled by the order machine.
//
// The hmac parameter is a shared secret in a URL, which is what most PSPs can send. The
// standard expects mutual TLS on the webhook instead: put a TLS listener that requires the
// PSP's client certificate (a proxy such as nginx with ssl_verify_client, or a Go
// http.Server with tls.RequireAndVerifyClientCert and the PSP's CA) in front of this
// server, forward only /psp/webhook to it, and keep the hmac as a second check.

// pspConfig is the -psp-* flags.
type pspConfig struct {
	url, tokenURL, clientID, clientSecret string
	cert, key, ca, pixKey, send           string
	withdrawalKey                         string
	webhookSecret                         string
	reconcile                             time.Duration
}

// pspEnvSecret names the environment variable that may hold the client secret instead of
// -psp-client-secret (which a process listing shows).
const pspEnvSecret = "PAYMENTS_PSP_CLIENT_SECRET"

// defaultReconcile is how often the server reconciles with the PSP unless told otherwise.
const defaultReconcile = time.Minute

// checkPSP validates the -psp-* flags of -rail apipix, before anything is opened.
func checkPSP(c config) error {
	p := c.psp
	if p.clientSecret == "" {
		p.clientSecret = os.Getenv(pspEnvSecret)
	}
	missing := []struct{ flag, value string }{
		{"-psp-url", p.url}, {"-psp-client-id", p.clientID}, {"-psp-client-secret (or " + pspEnvSecret + ")", p.clientSecret},
		{"-psp-cert", p.cert}, {"-psp-key", p.key}, {"-psp-pix-key", p.pixKey}, {"-psp-webhook-secret", p.webhookSecret},
	}
	for _, m := range missing {
		if m.value == "" {
			return badFlag("-rail apipix needs %s", m.flag)
		}
	}
	if _, _, err := apipix.LoadCertificate(p.cert, p.key, p.ca); err != nil {
		return badFlag("-psp-cert/-psp-key/-psp-ca: %v", err)
	}
	switch p.send {
	case "efi", "none":
	default:
		return badFlag("-psp-send %q: the sending extensions this build has are efi and none (payouts refused)", p.send)
	}
	if strings.IndexFunc(p.webhookSecret, func(r rune) bool { return r <= ' ' || r == 0x7f || r > unicode.MaxASCII }) >= 0 {
		return badFlag("-psp-webhook-secret must be printable ASCII without spaces (it travels in the webhook's URL, escaped)")
	}
	if p.reconcile < time.Second {
		return badFlag("-psp-reconcile must be at least 1s, got %v", p.reconcile)
	}
	if c.pixKey != "" && c.pixKey != p.pixKey {
		return badFlag("-pix-key %q differs from -psp-pix-key %q: with -rail apipix the default company receives at its PSP key (leave -pix-key out)", c.pixKey, p.pixKey)
	}
	_, err := openAPIPix(c) // the URL and the key, checked by the driver itself
	return err
}

// openAPIPix makes the API Pix driver the -psp-* flags describe.
func openAPIPix(c config) (*apipix.Driver, error) {
	p := c.psp
	if p.clientSecret == "" {
		p.clientSecret = os.Getenv(pspEnvSecret)
	}
	cert, pool, err := apipix.LoadCertificate(p.cert, p.key, p.ca)
	if err != nil {
		return nil, badFlag("-psp-cert/-psp-key/-psp-ca: %v", err)
	}
	d, err := apipix.New(apipix.Config{BaseURL: p.url, TokenURL: p.tokenURL, ClientID: p.clientID, ClientSecret: p.clientSecret,
		Certificate: cert, RootCAs: pool, PixKey: p.pixKey, WithdrawalKey: p.withdrawalKey})
	if err != nil {
		return nil, badFlag("-rail apipix: %v", err)
	}
	if p.send == "efi" {
		d.SetSender(apipix.NewEfiSender(d))
	}
	return d, nil
}

// pspWebhookPath is where the PSP's POSTs arrive.
const pspWebhookPath = "/psp/webhook"

// pspWebhookURL is the URL registered with the PSP.
func pspWebhookURL(baseURL, secret string) string {
	return baseURL + pspWebhookPath + "?hmac=" + url.QueryEscape(secret) + "&ignorar="
}

// maxPSPBody bounds a PSP notification's body.
const maxPSPBody = 1 << 20

// pspWebhook serves the PSP's POSTs of received Pix: see the top of this file.
func pspWebhook(svc *payments.Service, secret string, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != pspWebhookPath && r.URL.Path != pspWebhookPath+"/pix" {
			writeJSONError(w, http.StatusNotFound, "not found")
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSONError(w, http.StatusMethodNotAllowed, "method not allowed: POST")
			return
		}
		got := r.URL.Query().Get("hmac")
		if subtle.ConstantTimeCompare([]byte(got), []byte(secret)) != 1 {
			log.Warn("psp webhook: wrong or missing hmac", "remote", r.RemoteAddr)
			writeJSONError(w, http.StatusUnauthorized, "wrong or missing hmac")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPSPBody))
		if err != nil {
			writeJSONError(w, http.StatusRequestEntityTooLarge, "body too large or unreadable")
			return
		}
		n, err := apipix.ParseNotification(body)
		if err != nil && probe(body) {
			// a PSP's test call (Efí POSTs {"evento":"teste_webhook"} when the webhook is
			// registered, and wants a 2xx): nothing to record
			writeAdminJSON(w, http.StatusOK, map[string]string{"status": "OK"})
			return
		}
		if err != nil {
			log.Warn("psp webhook: malformed notification", "err", err)
			writeJSONError(w, http.StatusBadRequest, err.Error())
			return
		}
		for _, p := range n.Pix {
			routed, err := svc.ReceiveBankPix(r.Context(), p)
			switch payments.ErrorCode(err) {
			case "":
				if routed.New {
					log.Info("psp webhook: Pix received", "endToEndId", p.EndToEndID, "company", routed.CompanyID, "unmatched", routed.Unmatched != nil)
				}
			case payments.EINVALID, payments.ECONFLICT:
				// sending it again changes nothing: logged for the operator, and the rest go on
				log.Error("psp webhook: a Pix that cannot be recorded", "endToEndId", p.EndToEndID, "err", err)
			default: // the store's failure: the PSP sends it again, and recording is idempotent
				log.Error("psp webhook: recording a Pix", "endToEndId", p.EndToEndID, "err", err)
				writeJSONError(w, http.StatusServiceUnavailable, "not recorded: send again")
				return
			}
		}
		for _, u := range n.Refunds {
			if !u.Settlement.Status.Final() {
				continue
			}
			err := svc.RecordSettlement(r.Context(), u.ID, u.Settlement)
			switch payments.ErrorCode(err) {
			case "", payments.ENOTFOUND: // not one of ours (a refund made elsewhere): nothing to record
			case payments.EINVALID, payments.ECONFLICT:
				log.Error("psp webhook: a refund outcome that cannot be recorded", "id", u.ID, "err", err)
			default:
				log.Error("psp webhook: recording a refund outcome", "id", u.ID, "err", err)
				writeJSONError(w, http.StatusServiceUnavailable, "not recorded: send again")
				return
			}
		}
		for _, u := range n.Sends {
			// the outcome of a payout: the order machine asks the PSP itself (Status)
			log.Info("psp webhook: a payout's outcome", "idEnvio", u.IDEnvio, "endToEndId", u.EndToEndID, "status", u.Status)
		}
		writeAdminJSON(w, http.StatusOK, map[string]string{"status": "OK"})
	})
}

// probe reports whether body is a JSON object without a "pix" member: a PSP's test call,
// not a notification.
func probe(body []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	_, ok := m["pix"]
	return !ok
}

// writeJSONError answers {"error": msg} with status.
func writeJSONError(w http.ResponseWriter, status int, msg string) {
	writeAdminJSON(w, status, map[string]string{"error": msg})
}

// withPSPWebhook serves the PSP's webhook paths with psp and everything else with api.
func withPSPWebhook(api, psp http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == pspWebhookPath || strings.HasPrefix(r.URL.Path, pspWebhookPath+"/") {
			psp.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// reconciler keeps the server in step with the PSP: it registers the webhook until the
// PSP takes it, then reconciles every interval over a window that overlaps the last one.
type reconciler struct {
	svc      *payments.Service
	psp      *apipix.Driver
	hookURL  string
	interval time.Duration
	log      *slog.Logger

	mu         sync.Mutex // one reconciliation at a time (the loop's, the operator's)
	registered bool
	last       time.Time // the end of the last window reconciled; zero before the first
}

// reconcileOverlap is how far a window reaches back before the end of the last: a PSP
// may list a Pix a little after its time.
const reconcileOverlap = 5 * time.Minute

// firstWindow is how far back the first reconciliation after a start reaches: what
// arrived while the server was down.
const firstWindow = 24 * time.Hour

// run reconciles until ctx ends, once at start (the webhook registered before it, by
// register, if the PSP took it).
func (r *reconciler) run(ctx context.Context) {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		r.once(ctx, time.Time{})
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// registerTimeout bounds the registration of the webhook at start.
const registerTimeout = 10 * time.Second

// register registers the webhook with the PSP unless it has been; a failure is logged,
// and the next reconciliation tries again.
func (r *reconciler) register(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.registerLocked(ctx)
}

func (r *reconciler) registerLocked(ctx context.Context) {
	if r.registered {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	if err := r.psp.RegisterWebhook(ctx, r.hookURL); err != nil {
		r.log.Error("psp: registering the webhook (tried again at the next reconciliation)", "err", err)
		return
	}
	r.registered = true
	r.log.Info("psp: webhook registered", "url", redactHook(r.hookURL))
}

// once registers the webhook if it is not yet, and reconciles from since (zero: from
// the end of the last window less reconcileOverlap, or firstWindow ago) to now.
func (r *reconciler) once(ctx context.Context, since time.Time) (payments.ReconcileResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.registerLocked(ctx)
	to := time.Now().UTC()
	from := since
	switch {
	case !from.IsZero():
	case r.last.IsZero():
		from = to.Add(-firstWindow)
	default:
		from = r.last.Add(-reconcileOverlap)
	}
	res, err := r.svc.Reconcile(ctx, from, to)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error("psp: reconciling", "from", from, "to", to, "err", err)
		}
		return res, err
	}
	if since.IsZero() {
		r.last = to
	}
	if res.Recorded > 0 || res.Unmatched > 0 {
		r.log.Warn("psp: reconciliation recorded Pix the webhook had not brought", "recorded", res.Recorded, "unmatched", res.Unmatched)
	}
	return res, nil
}

// redactHook is the webhook URL without its secret, for the log.
func redactHook(u string) string {
	base, _, _ := strings.Cut(u, "?")
	return base + "?hmac=REDACTED"
}

// handleReconcile answers the operator's POST /psp/reconcile[?since=RFC3339]: one
// reconciliation at once, from since (default: as the loop's next) to now, and its counts.
func handleReconcile(r *reconciler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r == nil {
			writeJSONError(w, http.StatusNotImplemented, "this server does not run on -rail apipix: there is no PSP to reconcile with")
			return
		}
		var since time.Time
		if s := req.URL.Query().Get("since"); s != "" {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				writeJSONError(w, http.StatusBadRequest, "since must be an RFC 3339 time, e.g. 2026-11-27T00:00:00Z")
				return
			}
			since = t
		}
		res, err := r.once(req.Context(), since)
		if err != nil {
			writeJSONError(w, http.StatusBadGateway, "reconciling with the PSP: "+payments.ErrorMessage(err))
			return
		}
		writeAdminJSON(w, http.StatusOK, res)
	})
}
