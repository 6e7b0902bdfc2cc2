package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/rail/apipix"
	"github.com/pixfoundry/payments/rail/apipix/apipixtest"
)

// pspWebhookSecret is the -psp-webhook-secret of the tests.
const pspWebhookSecret = "s3cret-webhook-hmac-0001"

// pspServer is a server on -rail apipix over a fake PSP, with its operator listener.
type pspServer struct {
	running
	psp   *apipixtest.PSP
	appID string
	admin string // http://host:port of the operator listener
}

// startPSP starts the server exactly as the README's command line does, against psp.
func startPSP(t *testing.T, psp *apipixtest.PSP, extra ...string) pspServer {
	t.Helper()
	dir := t.TempDir()
	cert, key, ca, err := psp.WritePEM(dir)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-db", filepath.Join(dir, "payments.db"), "-sandbox=false", "-tick", "0",
		"-rail", "apipix", "-psp-url", psp.URL(), "-psp-client-id", psp.ClientID()}
	if os.Getenv(pspEnvSecret) == "" { // else the secret comes from there
		args = append(args, "-psp-client-secret", psp.ClientSecret())
	}
	args = append(append(args, "-psp-cert", cert, "-psp-key", key, "-psp-ca", ca, "-psp-pix-key", psp.PixKey(),
		"-psp-send", "efi", "-psp-webhook-secret", pspWebhookSecret, "-psp-reconcile", "1h",
		"-admin-addr", "127.0.0.1:0", "-merchant-name", "Loja Exemplo", "-merchant-city", "Sao Paulo"), extra...)
	srv := start(t, args...)
	m := appIDLine.FindStringSubmatch(srv.stdout.String())
	if m == nil {
		t.Fatalf("no App ID printed:\n%s", srv.stdout.String())
	}
	admin := ""
	for _, line := range strings.Split(srv.stderr.String(), "\n") {
		if strings.Contains(line, "operator listener") {
			_, rest, _ := strings.Cut(line, "addr=")
			admin = "http://" + strings.Fields(rest)[0]
		}
	}
	if admin == "" {
		t.Fatalf("no operator listener in the log:\n%s", srv.stderr.String())
	}
	return pspServer{running: srv, psp: psp, appID: m[1], admin: admin}
}

// charge creates a charge over the API and returns its body's charge.
func (s pspServer) charge(t *testing.T, corr string, value int) (int, map[string]any) {
	t.Helper()
	status, body := call(t, "POST", s.base+"/api/v1/charge", s.appID, fmt.Sprintf(`{"correlationID":%q,"value":%d}`, corr, value))
	if status != http.StatusOK {
		return status, body
	}
	return status, body["charge"].(map[string]any)
}

// chargeStatus is the charge's status over the API.
func (s pspServer) chargeStatus(t *testing.T, id string) string {
	t.Helper()
	status, body := call(t, "GET", s.base+"/api/v1/charge/"+id, s.appID, "")
	if status != http.StatusOK {
		t.Fatalf("GET charge %s: %d %v", id, status, body)
	}
	return body["charge"].(map[string]any)["status"].(string)
}

// reconcile runs a reconciliation through the operator listener.
func (s pspServer) reconcile(t *testing.T) map[string]any {
	t.Helper()
	status, body := call(t, "POST", s.admin+"/psp/reconcile", "", "")
	if status != http.StatusOK {
		t.Fatalf("reconcile: %d %v", status, body)
	}
	return body
}

// TestPSP runs the server on the API Pix against a fake PSP (TLS, client certificate
// required, every request checked against the standard) and goes through what a company
// does with it: charges registered at the PSP, Pix notified once, twice or never (then
// reconciled), a notification with a wrong secret, a PSP that fails or is down, a token
// that expires, and payouts confirmed and refused.
func TestPSP(t *testing.T) {
	t.Parallel()
	psp := apipixtest.New(t, apipixtest.Options{})
	s := startPSP(t, psp, "-psp-withdrawal-key", "tesouraria@empresa.example.com")
	t.Cleanup(func() {
		if v := psp.Violations(); len(v) > 0 {
			t.Errorf("requests the standard does not allow:\n%s", strings.Join(v, "\n"))
		}
	})

	t.Run("WebhookRegisteredAtStart", func(t *testing.T) {
		is := is.New(t)
		is.Equal(psp.WebhookURL(), s.base+"/psp/webhook?hmac="+pspWebhookSecret+"&ignorar=") // Efí's convention
		is.True(!strings.Contains(s.stderr.String(), pspWebhookSecret))                      // the secret is never logged
		is.True(!strings.Contains(s.stderr.String(), psp.ClientSecret()))
	})

	t.Run("ChargeIsThePSPs", func(t *testing.T) {
		is := is.New(t)
		before := psp.Count("PUT", "/v2/cob/")
		status, c := s.charge(t, "c-psp", 1990)
		is.Equal(status, http.StatusOK)
		txid := c["transactionID"].(string)
		cob, ok := psp.Charge(txid)
		is.True(ok)                                      // registered at the PSP under the charge's transactionID
		is.Equal(c["brCode"], cob.PixCopiaECola)         // the code handed out is the PSP's
		is.Equal(cob.Value, int64(1990))                 // for the value
		is.Equal(psp.Count("PUT", "/v2/cob/"), before+1) // one registration

		_, err := psp.Pay(txid, 1990, apipixtest.Payer{Name: "Ana", TaxID: "52998224725"}, "")
		is.NoErr(err)                                     // a payer pays it; the PSP notifies the server
		is.Equal(len(psp.NotifyErrors()), 0)              // which answered 2xx, after recording it
		is.Equal(s.chargeStatus(t, "c-psp"), "COMPLETED") // paid
	})

	t.Run("DuplicatedWebhook", func(t *testing.T) {
		is := is.New(t)
		psp.SetNotify(apipixtest.NotifyTwice)
		defer psp.SetNotify(apipixtest.NotifyOnce)
		_, c := s.charge(t, "c-twice", 500)
		px, err := psp.Pay(c["transactionID"].(string), 500, apipixtest.Payer{Name: "Ana", TaxID: "52998224725"}, "")
		is.NoErr(err)
		is.Equal(len(psp.NotifyErrors()), 0)
		status, body := call(t, "GET", s.base+"/api/v1/transaction?charge="+c["correlationID"].(string), s.appID, "")
		is.Equal(status, http.StatusOK)
		n := 0
		for _, x := range body["transactions"].([]any) {
			if x.(map[string]any)["endToEndId"] == px.EndToEndID {
				n++
			}
		}
		is.Equal(n, 1) // recorded once
	})

	t.Run("DroppedWebhookReconciled", func(t *testing.T) {
		is := is.New(t)
		psp.SetNotify(apipixtest.NotifyNever)
		_, c := s.charge(t, "c-lost", 700)
		_, err := psp.Pay(c["transactionID"].(string), 700, apipixtest.Payer{Name: "Ana", TaxID: "52998224725"}, "")
		psp.SetNotify(apipixtest.NotifyOnce)
		is.NoErr(err)
		is.Equal(s.chargeStatus(t, "c-lost"), "ACTIVE") // the webhook never came
		res := s.reconcile(t)
		is.Equal(res["Recorded"], float64(1))              // the listing brought it
		is.Equal(s.chargeStatus(t, "c-lost"), "COMPLETED") // paid
		res = s.reconcile(t)
		is.Equal(res["Recorded"], float64(0)) // and once only
	})

	t.Run("WrongSecret", func(t *testing.T) {
		is := is.New(t)
		_, c := s.charge(t, "c-forged", 900)
		body := fmt.Sprintf(`{"pix":[{"endToEndId":"E09089356202611221200forgedpix01","txid":%q,"valor":"9.00","horario":"2026-11-22T12:00:00Z"}]}`, c["transactionID"])
		for _, q := range []string{"?hmac=wrong&ignorar=/pix", "", "?ignorar=/pix"} {
			res, err := http.Post(s.base+"/psp/webhook"+q, "application/json", strings.NewReader(body))
			is.NoErr(err)
			res.Body.Close()
			is.Equal(res.StatusCode, http.StatusUnauthorized) // refused
		}
		is.Equal(s.chargeStatus(t, "c-forged"), "ACTIVE") // and nothing recorded
		res, err := http.Post(s.base+"/psp/webhook?hmac="+pspWebhookSecret+"&ignorar=/pix", "application/json", strings.NewReader(`{"evento":"teste_webhook"}`))
		is.NoErr(err)
		res.Body.Close()
		is.Equal(res.StatusCode, http.StatusOK) // a PSP's test call is answered 2xx
	})

	t.Run("PSPFailsOnceThenRegisters", func(t *testing.T) {
		is := is.New(t)
		psp.FailNext("PUT", "/v2/cob/", http.StatusInternalServerError, 1)
		status, c := s.charge(t, "c-500", 1200)
		is.Equal(status, http.StatusOK) // retried under the same txid
		cob, ok := psp.Charge(c["transactionID"].(string))
		is.True(ok)
		is.Equal(c["brCode"], cob.PixCopiaECola)
		is.Equal(cob.Revisao, 0) // one charge, never revised
	})

	t.Run("PSPDown", func(t *testing.T) {
		is := is.New(t)
		psp.FailNext("", "/v2/cob/", http.StatusServiceUnavailable, 100)
		psp.FailNext("", "/oauth/", http.StatusServiceUnavailable, 100)
		status, body := s.charge(t, "c-down", 1200)
		psp.ClearFaults()
		is.Equal(status, http.StatusServiceUnavailable)                               // a clear 503
		is.True(strings.Contains(strings.ToLower(fmt.Sprint(body["error"])), "bank")) // naming the bank
		status, body = call(t, "GET", s.base+"/api/v1/charge/c-down", s.appID, "")
		is.Equal(status, http.StatusBadRequest) // nothing half-made (the real API's 400 for a charge not found)
		is.Equal(body["error"], "Charge not found")
	})

	t.Run("TokenExpiresMidRun", func(t *testing.T) {
		is := is.New(t)
		tokens := psp.TokensIssued()
		psp.ExpireTokens()
		status, _ := s.charge(t, "c-token", 300)
		is.Equal(status, http.StatusOK)        // the 401 fetched a new token
		is.Equal(psp.TokensIssued(), tokens+1) // one
	})

	t.Run("Payouts", func(t *testing.T) {
		is := is.New(t)
		pay := func(corr, key string) (int, map[string]any) {
			status, _ := call(t, "POST", s.base+"/api/v1/payment", s.appID,
				fmt.Sprintf(`{"value":100,"destinationAlias":%q,"destinationAliasType":"EMAIL","correlationID":%q,"autoApprove":true}`, key, corr))
			is.Equal(status, http.StatusOK)
			_, body := call(t, "GET", s.base+"/api/v1/payment/"+corr, s.appID, "")
			return status, body
		}
		_, body := pay("p-ok", "bruno@example.com")
		is.Equal(body["payment"].(map[string]any)["status"], "CONFIRMED") // Efí sent it
		status, e2e, ok := psp.Sent(body["payment"].(map[string]any)["id"].(string))
		is.True(ok)
		is.Equal(status, "REALIZADO")
		is.Equal(body["transaction"].(map[string]any)["endToEndId"], e2e) // with the PSP's endToEndId

		balance := func() float64 {
			_, b := call(t, "GET", s.base+"/api/v1/account/", s.appID, "")
			return b["accounts"].([]any)[0].(map[string]any)["balance"].(map[string]any)["total"].(float64)
		}
		before := balance()
		_, body = pay("p-refused", apipixtest.KeyRefused)
		is.Equal(body["payment"].(map[string]any)["status"], "FAILED") // the PSP refused the key
		is.Equal(balance(), before)                                    // and the money came back

		_, accounts := call(t, "GET", s.base+"/api/v1/account/", s.appID, "")
		account := accounts["accounts"].([]any)[0].(map[string]any)["accountId"].(string)
		sends := psp.SendCount()
		code, _ := call(t, "POST", s.base+"/api/v1/account/"+account+"/withdraw", s.appID, `{"value":200}`)
		is.Equal(code, http.StatusOK)
		is.Equal(psp.SendCount(), sends+1) // a withdrawal: sent to the company's account elsewhere
		is.True(balance() < before-200)    // its value (and fee) out of the balance
		_ = body
	})
}

// TestPSP_NotificationBodies: what the webhook answers to bodies a PSP (or anyone) may
// send: 400 for a malformed one, 405 for another method, and nothing recorded.
func TestPSP_NotificationBodies(t *testing.T) {
	t.Parallel()
	psp := apipixtest.New(t, apipixtest.Options{})
	s := startPSP(t, psp)
	url := s.base + "/psp/webhook/pix?hmac=" + pspWebhookSecret
	for _, tc := range []struct {
		name, method, body string
		want               int
	}{
		{"NotJSON", "POST", `{"pix":`, http.StatusBadRequest},
		{"BadValor", "POST", `{"pix":[{"endToEndId":"E09089356202611221200abcdefghijk","valor":"1.5","horario":"2026-11-22T12:00:00Z"}]}`, http.StatusBadRequest},
		{"BadEndToEnd", "POST", `{"pix":[{"endToEndId":"x","valor":"1.50","horario":"2026-11-22T12:00:00Z"}]}`, http.StatusBadRequest},
		{"Get", "GET", "", http.StatusMethodNotAllowed},
		{"Empty", "POST", `{"pix":[]}`, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			req, err := http.NewRequest(tc.method, url, bytes.NewReader([]byte(tc.body)))
			is.NoErr(err)
			res, err := client.Do(req)
			is.NoErr(err)
			var out map[string]any
			is.NoErr(json.NewDecoder(res.Body).Decode(&out))
			res.Body.Close()
			is.Equal(res.StatusCode, tc.want)
			if tc.want != http.StatusOK {
				is.True(out["error"] != "") // {"error": "..."}
			}
		})
	}
	is := is.New(t)
	status, body := call(t, "GET", s.base+"/api/v1/transaction", s.appID, "")
	is.Equal(status, http.StatusOK)
	is.Equal(len(body["transactions"].([]any)), 0) // nothing recorded
}

// TestPSP_CrashBetweenSendAndAnswer: the server binary sends a payout to the PSP and is
// killed (SIGKILL) after the PSP acted and before its answer was recorded. Opened again,
// the order is settled from what the PSP says, and the PSP got one send only: the
// payout's money left once.
func TestPSP_CrashBetweenSendAndAnswer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills a server process")
	}
	is := is.New(t)
	psp := apipixtest.New(t, apipixtest.Options{})
	bin, db := buildServer(t)
	cert, key, ca, err := psp.WritePEM(t.TempDir())
	is.NoErr(err)
	flags := []string{"-sandbox=false", "-rail", "apipix", "-psp-url", psp.URL(), "-psp-client-id", psp.ClientID(),
		"-psp-client-secret", psp.ClientSecret(), "-psp-cert", cert, "-psp-key", key, "-psp-ca", ca,
		"-psp-pix-key", psp.PixKey(), "-psp-send", "efi", "-psp-webhook-secret", pspWebhookSecret, "-psp-reconcile", "1h"}
	base, appID, cmd := startProcess(t, bin, db, true, flags...)

	// Money in: a charge the PSP's payer pays.
	status, body := call(t, "POST", base+"/api/v1/charge", appID, `{"correlationID":"fund","value":10000}`)
	is.Equal(status, http.StatusOK)
	_, err = psp.Pay(body["charge"].(map[string]any)["transactionID"].(string), 10000, apipixtest.Payer{Name: "Ana", TaxID: "52998224725"}, "")
	is.NoErr(err)
	is.Equal(len(psp.NotifyErrors()), 0)

	// A payout the PSP acts on and never answers: the server is killed meanwhile.
	hold := psp.HoldNext(t, "PUT", "/v3/gn/pix/")
	go func() {
		req, _ := http.NewRequest("POST", base+"/api/v1/payment", strings.NewReader(
			`{"value":2500,"destinationAlias":"bruno@example.com","destinationAliasType":"EMAIL","correlationID":"p-crash","autoApprove":true}`))
		req.Header.Set("Authorization", appID)
		req.Header.Set("Content-Type", "application/json")
		if res, err := client.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	select {
	case <-hold.Acted():
	case <-time.After(time.Minute):
		t.Fatal("the payout never reached the PSP")
	}
	is.NoErr(cmd.Process.Kill()) // SIGKILL: the PSP has sent it; the server never hears so
	cmd.Wait()
	hold.Release()
	is.Equal(psp.SendCount(), 1)

	// Opened again (as a library, on a clock the test moves past the order's lease).
	certs, pool, err := apipix.LoadCertificate(cert, key, ca)
	is.NoErr(err)
	d, err := apipix.New(apipix.Config{BaseURL: psp.URL(), ClientID: psp.ClientID(), ClientSecret: psp.ClientSecret(),
		Certificate: certs, RootCAs: pool, PixKey: psp.PixKey()})
	is.NoErr(err)
	d.SetSender(apipix.NewEfiSender(d))
	clock := payments.NewManualClock(time.Now())
	svc, err := payments.Open(db, payments.Options{Clock: clock, Rail: d, BankCharges: true})
	is.NoErr(err)
	defer svc.Close()
	p, err := svc.GetPayment(context.Background(), "p-crash")
	is.NoErr(err) // the payout was recorded before it was sent
	is.Equal(p.Status, payments.PaymentApproved)
	_, err = svc.AdvanceClock(context.Background(), clock, 10*time.Minute)
	is.NoErr(err)
	p, err = svc.GetPayment(context.Background(), "p-crash")
	is.NoErr(err)
	is.Equal(p.Status, payments.PaymentConfirmed) // settled from the PSP's word
	is.Equal(psp.SendCount(), 1)                  // never sent twice
	st, _, ok := psp.Sent(p.ID)
	is.True(ok)
	is.Equal(st, "REALIZADO")
	report, err := svc.Audit(context.Background())
	is.NoErr(err)
	is.True(report.OK()) // the books balance
	is.True(len(psp.Violations()) == 0)
}

// TestPSP_SecretFromTheEnvironment: the client secret may come from
// PAYMENTS_PSP_CLIENT_SECRET instead of a flag a process listing shows.
func TestPSP_SecretFromTheEnvironment(t *testing.T) {
	is := is.New(t)
	psp := apipixtest.New(t, apipixtest.Options{})
	t.Setenv(pspEnvSecret, psp.ClientSecret())
	s := startPSP(t, psp)
	status, _ := s.charge(t, "c-env", 100)
	is.Equal(status, http.StatusOK) // the PSP took the credentials
}

// TestPSP_AnySecret: the webhook secret travels escaped in the URL the PSP calls, so any
// printable one works, short ones (with a warning) and ones with URL characters included.
func TestPSP_AnySecret(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{"W", "a&b=c?d/e%f#g+h"} {
		t.Run(secret, func(t *testing.T) {
			is := is.New(t)
			psp := apipixtest.New(t, apipixtest.Options{})
			s := startPSP(t, psp, "-psp-webhook-secret", secret)
			_, c := s.charge(t, "c1", 100)
			_, err := psp.Pay(c["transactionID"].(string), 100, apipixtest.Payer{Name: "Ana", TaxID: "52998224725"}, "")
			is.NoErr(err)
			is.Equal(len(psp.NotifyErrors()), 0)           // the PSP's call carried it right
			is.Equal(s.chargeStatus(t, "c1"), "COMPLETED") // and was taken
		})
	}
}
