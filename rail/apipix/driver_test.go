package apipix_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/rail/apipix"
	"github.com/pixfoundry/payments/rail/apipix/apipixtest"
	"github.com/pixfoundry/payments/rail/railtest"
)

var ctx = context.Background()

// t0 is where every test clock starts: days after the windows railtest lists, so that
// the Pix a harness makes the PSP receive fall outside them.
var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// settleDelay is how long the PSP keeps sends and refunds EM_PROCESSAMENTO.
const settleDelay = 5 * time.Second

// withdrawalKey is the company's own account, where withdrawals go.
const withdrawalKey = "tesouraria@empresa.example.com"

// hook is the company's webhook: an HTTPS server that parses what the PSP POSTs.
type hook struct {
	srv   *httptest.Server
	mu    sync.Mutex
	paths []string
	got   []apipix.Notification
	errs  []error
}

func newHook(t *testing.T) *hook {
	t.Helper()
	h := &hook{}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		n, err := apipix.ParseNotification(body)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.paths = append(h.paths, r.URL.RequestURI())
		if err != nil {
			h.errs = append(h.errs, err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.got = append(h.got, n)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// notifications returns what the webhook got so far, and the errors it answered.
func (h *hook) notifications() ([]apipix.Notification, []string, []error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]apipix.Notification(nil), h.got...), append([]string(nil), h.paths...), append([]error(nil), h.errs...)
}

// env is a PSP, a driver over it with Efí's sender and a registered webhook, and their
// clock.
type env struct {
	psp   *apipixtest.PSP
	d     *apipix.Driver
	clock *apipixtest.Clock
	hook  *hook
}

// config is the driver's configuration for psp on clock.
func config(psp *apipixtest.PSP, c *apipixtest.Clock) apipix.Config {
	return apipix.Config{
		BaseURL:       psp.URL(),
		TokenURL:      psp.TokenURL(),
		ClientID:      psp.ClientID(),
		ClientSecret:  psp.ClientSecret(),
		Certificate:   psp.ClientCertificate(),
		RootCAs:       psp.RootCAs(),
		PixKey:        psp.PixKey(),
		WithdrawalKey: withdrawalKey,
		Now:           c.Now,
	}
}

// newEnv starts a PSP with o (its clock and settle delay set here) and a driver over it,
// and checks, when the test ends, that the driver broke none of the standard's rules.
func newEnv(t *testing.T, o apipixtest.Options) *env {
	t.Helper()
	is := is.New(t)
	c := apipixtest.NewClock(t0)
	o.Now, o.SettleDelay = c.Now, settleDelay
	psp := apipixtest.New(t, o)
	d, err := apipix.New(config(psp, c))
	is.NoErr(err) // the PSP's configuration
	d.SetSender(apipix.NewEfiSender(d))
	h := newHook(t)
	// Efí's advice: the PSP appends /pix to the URL, which lands in an ignored parameter.
	is.NoErr(d.RegisterWebhook(ctx, h.srv.URL+"/psp/webhook?hmac=x&ignorar=")) // Efí sends only from a key with a webhook
	t.Cleanup(func() {
		for _, v := range psp.Violations() {
			t.Errorf("the driver broke the standard: %s", v)
		}
	})
	return &env{psp: psp, d: d, clock: c, hook: h}
}

// settle moves the clock past the PSP's settle delay.
func (e *env) settle() { e.clock.Advance(settleDelay + time.Second) }

// payer is who pays in these tests.
var payer = apipixtest.Payer{Name: "Pagador Teste", TaxID: "52998224725"}

// harness is the conformance harness of the driver in e (or of r, when not nil, a Rail
// over it): a payment to a key, one by bank account, a refund of a Pix the PSP received,
// a withdrawal, a send that fails and one refused.
func harness(t *testing.T, e *env, r rail.Rail) railtest.Harness {
	t.Helper()
	px, err := e.psp.Pay("estatico1", 5000, payer, "pix para devolver")
	is.New(t).NoErr(err) // a Pix to refund
	if r == nil {
		r = e.d
	}
	return railtest.Harness{
		Rail:   r,
		Settle: func(t *testing.T) { e.settle() },
		Confirmed: []rail.PixOrder{
			{ID: "0123456789abcdef01234567", Kind: rail.OrderPayment, Key: "ana@example.com", KeyType: brcode.KeyEmail, Value: 1500, SentAt: t0, Comment: "pedido 1"},
			{ID: "pay-phone", Kind: rail.OrderPayment, Key: "+5511987654321", Value: 250, SentAt: t0},
			{ID: "pay-account", Kind: rail.OrderPayment, Value: 700, SentAt: t0, Account: &rail.BankAccount{
				ISPB: "12345678", Branch: "0001", Account: "1234567-8", AccountType: "CACC", HolderName: "Ana Souza", HolderTaxID: "52998224725"}},
			{ID: "refund1", Kind: rail.OrderRefund, EndToEndID: px.EndToEndID, Value: 500, SentAt: t0, Comment: "devolução parcial"},
			{ID: "withdrawal1", Kind: rail.OrderWithdrawal, Value: 10000, SentAt: t0},
		},
		Failing: []rail.PixOrder{{ID: "fails1", Kind: rail.OrderPayment, Key: apipixtest.KeyFails, Value: 100, SentAt: t0}},
		Refused: rail.PixOrder{ID: "refused1", Kind: rail.OrderPayment, Key: apipixtest.KeyRefused, KeyType: brcode.KeyEmail, Value: 100, SentAt: t0},
		Key:     e.psp.PixKey(), KeyType: brcode.KeyEmail,
		MissingKey: "ninguem@example.com", MissingKeyType: brcode.KeyEmail,
		NoKeyLookup: true,
		Charge: rail.Charge{TxID: "railtestcharge00000000000001", Key: e.psp.PixKey(), Value: 1000, Expires: t0.Add(time.Hour),
			MerchantName: "Loja da Ana", MerchantCity: "Sao Paulo", Message: "pedido 1"},
		Receive: func(t *testing.T, p rail.ReceivedPix) { e.psp.Receive(p) },
	}
}

// The driver passes the conformance suite over the fake PSP, whether the PSP revises a
// charge PUT again or refuses its txid, and through a FaultRail that injects nothing.
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reuse  bool
		faults bool
	}{{"Revise", false, false}, {"RefuseTxIDReuse", true, false}, {"FaultRail", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			railtest.Run(t, func(t *testing.T) railtest.Harness {
				e := newEnv(t, apipixtest.Options{RefuseTxIDReuse: tc.reuse})
				var r rail.Rail
				if tc.faults {
					r = railtest.Faults(e.d, 1).Rail()
				}
				return harness(t, e, r)
			})
		})
	}
}

// Through a FaultRail that loses answers and fails calls, every order is sent once and
// every charge registered once: retries read back what the PSP did.
func TestFaults_RetriesAreOneOrder(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, apipixtest.Options{})
	f := railtest.Faults(e.d, 7)
	r := f.Rail()
	o := rail.PixOrder{ID: "0123456789abcdef01234567", Kind: rail.OrderPayment, Key: "ana@example.com", Value: 1500, SentAt: t0}

	f.Next(railtest.MethodSend, railtest.LoseAnswer, 2)
	for range 2 {
		_, err := r.Send(ctx, o)
		is.True(errors.Is(err, railtest.ErrInjected)) // the answer was lost
		_, refused := rail.AsRefused(err)
		is.True(!refused) // never a refusal
	}
	s, err := r.Status(ctx, o)
	is.NoErr(err)                              // the PSP has the order
	is.Equal(s.Status, rail.SettlementPending) // in processing
	is.Equal(e.psp.SendCount(), 1)             // sent once for all the tries
	e.settle()
	s, err = r.Send(ctx, o)
	is.NoErr(err)
	is.Equal(s.Status, rail.SettlementConfirmed) // the resend reports the one send
	is.Equal(e.psp.SendCount(), 1)

	c := rail.Charge{TxID: "faultcharge0000000000000000001", Value: 990, Expires: t0.Add(time.Hour)}
	col := r.(rail.Collector)
	f.Next(railtest.MethodIssueCharge, railtest.LoseAnswer, 1)
	_, err = col.IssueCharge(ctx, c)
	is.True(errors.Is(err, railtest.ErrInjected))
	got, err := col.IssueCharge(ctx, c)
	is.NoErr(err) // the retry finds the charge
	st, ok := e.psp.Charge(c.TxID)
	is.True(ok)
	is.Equal(got.BRCode, st.PixCopiaECola) // its code
}

func TestToken(t *testing.T) {
	t.Run("Cached", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t, apipixtest.Options{})
		for range 5 {
			_, err := e.d.ListReceived(ctx, rail.ReceivedQuery{From: t0.Add(-time.Hour), To: t0})
			is.NoErr(err)
		}
		is.Equal(e.psp.TokensIssued(), 1) // one token for every call
	})
	t.Run("Concurrent", func(t *testing.T) {
		is := is.New(t)
		c := apipixtest.NewClock(t0)
		psp := apipixtest.New(t, apipixtest.Options{Now: c.Now})
		d, err := apipix.New(config(psp, c))
		is.NoErr(err)
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = d.ListReceived(ctx, rail.ReceivedQuery{From: t0.Add(-time.Hour), To: t0})
			})
		}
		wg.Wait()
		for _, err := range errs {
			is.NoErr(err)
		}
		is.Equal(psp.TokensIssued(), 1) // concurrent callers share one fetch
	})
	t.Run("Revoked", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t, apipixtest.Options{})
		is.Equal(e.psp.TokensIssued(), 1)
		e.psp.ExpireTokens()
		_, err := e.d.ListReceived(ctx, rail.ReceivedQuery{From: t0.Add(-time.Hour), To: t0})
		is.NoErr(err)                     // the call that met a 401 got a new token and went through
		is.Equal(e.psp.TokensIssued(), 2) // one new token
		_, err = e.d.ListReceived(ctx, rail.ReceivedQuery{From: t0.Add(-time.Hour), To: t0})
		is.NoErr(err)
		is.Equal(e.psp.TokensIssued(), 2) // and it is kept
	})
	t.Run("Expiring", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t, apipixtest.Options{TokenTTL: 10 * time.Minute})
		e.clock.Advance(9*time.Minute + 30*time.Second) // within the last minute of the token
		_, err := e.d.ListReceived(ctx, rail.ReceivedQuery{From: t0.Add(-time.Hour), To: t0})
		is.NoErr(err)
		is.Equal(e.psp.TokensIssued(), 2) // renewed before it expired, without a 401
	})
}

// The client secret appears in no error, whatever fails.
func TestSecretNeverInErrors(t *testing.T) {
	is := is.New(t)
	const secret = "s3cr3t-n0t-t0-b3-l0gg3d"
	c := apipixtest.NewClock(t0)
	psp := apipixtest.New(t, apipixtest.Options{Now: c.Now})
	cfg := config(psp, c)
	cfg.ClientSecret = secret // not the PSP's
	d, err := apipix.New(cfg)
	is.NoErr(err)
	d.SetSender(apipix.NewEfiSender(d))
	var errs []error
	_, err = d.ListReceived(ctx, rail.ReceivedQuery{From: t0.Add(-time.Hour), To: t0})
	errs = append(errs, err)
	_, err = d.Send(ctx, rail.PixOrder{ID: "p1", Kind: rail.OrderPayment, Key: "ana@example.com", Value: 1, SentAt: t0})
	errs = append(errs, err)
	_, err = d.IssueCharge(ctx, rail.Charge{TxID: "secretcharge00000000000000001", Value: 1, Expires: t0.Add(time.Hour)})
	errs = append(errs, err)
	errs = append(errs, d.RegisterWebhook(ctx, "https://example.com/hook"))
	for _, err := range errs {
		is.True(err != nil)                             // wrong credentials fail every call
		is.True(!strings.Contains(err.Error(), secret)) // without the secret in the message
		is.True(!strings.Contains(fmtErr(err), secret)) // nor in its details
		_, refused := rail.AsRefused(err)
		is.True(!refused) // and refuse nothing
	}
	_, err = apipix.New(apipix.Config{BaseURL: "ftp://x", ClientID: "id", ClientSecret: secret, PixKey: "a@b.c"})
	is.True(err != nil && !strings.Contains(err.Error(), secret)) // nor in a configuration error
}

// fmtErr is every detail of err: the chain's messages and an *apipix.Error's fields.
func fmtErr(err error) string {
	var b strings.Builder
	for e := err; e != nil; e = errors.Unwrap(e) {
		b.WriteString(e.Error())
	}
	var ae *apipix.Error
	if errors.As(err, &ae) {
		j, _ := json.Marshal(ae)
		b.Write(j)
	}
	return b.String()
}

func TestIssueCharge(t *testing.T) {
	for _, reuse := range []bool{false, true} {
		name := "Revise"
		if reuse {
			name = "RefuseTxIDReuse"
		}
		t.Run(name, func(t *testing.T) {
			t.Run("ServerErrorThenRetry", func(t *testing.T) {
				is := is.New(t)
				e := newEnv(t, apipixtest.Options{RefuseTxIDReuse: reuse})
				c := rail.Charge{TxID: "retrycharge0000000000000000001", Value: 1234, Expires: t0.Add(time.Hour)}
				e.psp.FailNext(http.MethodPut, "/v2/cob/", http.StatusInternalServerError, 1)
				_, err := e.d.IssueCharge(ctx, c)
				is.True(err != nil) // the PSP failed
				var inv *rail.InvalidError
				is.True(!errors.As(err, &inv)) // an unknown outcome, not the caller's fault
				got, err := e.d.IssueCharge(ctx, c)
				is.NoErr(err) // the retry registers it
				st, ok := e.psp.Charge(c.TxID)
				is.True(ok)
				is.Equal(st.Status, "ATIVA")
				is.Equal(st.Revisao, 0)                // one charge, never revised
				is.Equal(got.BRCode, st.PixCopiaECola) // with its code
				is.Equal(got.Location, st.Location)
				_, err = brcode.Parse(got.BRCode)
				is.NoErr(err) // a BR Code
			})
			t.Run("LostAnswer", func(t *testing.T) {
				is := is.New(t)
				e := newEnv(t, apipixtest.Options{RefuseTxIDReuse: reuse})
				c := rail.Charge{TxID: "lostcharge00000000000000000001", Value: 1234, Expires: t0.Add(time.Hour)}
				e.psp.LoseNext(http.MethodPut, "/v2/cob/", 1)
				_, err := e.d.IssueCharge(ctx, c)
				is.True(err != nil) // the answer was lost
				st, ok := e.psp.Charge(c.TxID)
				is.True(ok) // but the charge was made
				got, err := e.d.IssueCharge(ctx, c)
				is.NoErr(err)                          // the retry finds it
				is.Equal(got.BRCode, st.PixCopiaECola) // the one charge's code
				again, _ := e.psp.Charge(c.TxID)
				is.Equal(again.PixCopiaECola, st.PixCopiaECola) // still the one charge
				is.Equal(again.Status, "ATIVA")
				is.Equal(again.Revisao, 0)                           // unrevised
				is.Equal(e.psp.Count(http.MethodPut, "/v2/cob/"), 1) // by one PUT
			})
			t.Run("OtherChargeUnderTxID", func(t *testing.T) {
				is := is.New(t)
				e := newEnv(t, apipixtest.Options{RefuseTxIDReuse: reuse})
				c := rail.Charge{TxID: "samecharge00000000000000000001", Value: 1234, Expires: t0.Add(time.Hour)}
				_, err := e.d.IssueCharge(ctx, c)
				is.NoErr(err)
				_, err = e.psp.Pay(c.TxID, 1234, payer, "")
				is.NoErr(err) // paid
				c.Value = 999
				_, err = e.d.IssueCharge(ctx, c)
				var inv *rail.InvalidError
				is.True(errors.As(err, &inv)) // the txid has another charge
				is.Equal(inv.Field, "txid")
			})
		})
	}
}

func TestIssueCharge_CobV(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, apipixtest.Options{})
	c := rail.Charge{TxID: "duecharge000000000000000000001", Value: 10000, PayerName: "Maria Silva", PayerTaxID: "529.982.247-25",
		Message: "mensalidade", Due: &rail.DueTerms{Date: "2026-12-10", DaysAfter: 30, FineBasisPoints: 200,
			InterestBasisPointsPerDay: 3, DiscountTiers: []rail.DiscountTier{{Date: "2026-12-01", Centavos: 500}, {Date: "2026-12-05", Centavos: 250}}}}
	got, err := e.d.IssueCharge(ctx, c)
	is.NoErr(err) // a due-date charge
	st, ok := e.psp.Charge(c.TxID)
	is.True(ok)
	is.Equal(st.Kind, "cobv") // registered as a cobv
	is.Equal(st.Value, int64(10000))
	is.Equal(got.BRCode, st.PixCopiaECola)
	var body map[string]any
	is.NoErr(json.Unmarshal(st.Body, &body))
	is.Equal(body, map[string]any{
		"calendario": map[string]any{"dataDeVencimento": "2026-12-10", "validadeAposVencimento": float64(30)},
		"devedor":    map[string]any{"cpf": "52998224725", "nome": "Maria Silva"},
		"valor": map[string]any{
			"original": "100.00",
			"multa":    map[string]any{"modalidade": float64(2), "valorPerc": "2.00"}, // percentual
			"juros":    map[string]any{"modalidade": float64(2), "valorPerc": "0.03"}, // percentual ao dia, dias corridos
			"desconto": map[string]any{"modalidade": float64(1), "descontoDataFixa": []any{ // valor fixo até as datas
				map[string]any{"data": "2026-12-01", "valorPerc": "5.00"},
				map[string]any{"data": "2026-12-05", "valorPerc": "2.50"},
			}},
		},
		"chave":              e.psp.PixKey(),
		"solicitacaoPagador": "mensalidade",
	}) // the standard's CobVSolicitada, field by field

	again, err := e.d.IssueCharge(ctx, c)
	is.NoErr(err)
	is.Equal(again, got)                                  // issued again: the same charge
	is.Equal(e.psp.Count(http.MethodPut, "/v2/cobv/"), 1) // made once

	is.NoErr(e.d.RemoveCharge(ctx, c.TxID)) // removed through /cobv once /cob has no such charge
	st, _ = e.psp.Charge(c.TxID)
	is.Equal(st.Status, "REMOVIDA_PELO_USUARIO_RECEBEDOR")
	err = e.d.RemoveCharge(ctx, c.TxID)
	is.True(errors.Is(err, rail.ErrUnknownCharge)) // removed before
}

func TestRemoveCharge_Paid(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, apipixtest.Options{})
	c := rail.Charge{TxID: "paidcharge00000000000000000001", Value: 500, Expires: t0.Add(time.Hour)}
	_, err := e.d.IssueCharge(ctx, c)
	is.NoErr(err)
	_, err = e.psp.Pay(c.TxID, 500, payer, "")
	is.NoErr(err)
	err = e.d.RemoveCharge(ctx, c.TxID)
	is.True(err != nil)                             // a paid charge cannot be removed
	is.True(!errors.Is(err, rail.ErrUnknownCharge)) // and is no unknown charge
}

func TestSend(t *testing.T) {
	t.Run("LostAnswer", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t, apipixtest.Options{})
		o := rail.PixOrder{ID: "0123456789abcdef01234567", Kind: rail.OrderPayment, Key: "ana@example.com", Value: 1500, SentAt: t0}
		e.psp.LoseNext(http.MethodPut, "/v3/gn/pix/", 1)
		_, err := e.d.Send(ctx, o)
		is.True(err != nil) // the answer was lost
		_, refused := rail.AsRefused(err)
		is.True(!refused) // an unknown outcome
		s, err := e.d.Status(ctx, o)
		is.NoErr(err) // Status finds the send
		is.Equal(s.Status, rail.SettlementPending)
		is.Equal(s.BankRef, o.ID) // under its idEnvio
		s, err = e.d.Send(ctx, o)
		is.NoErr(err)
		is.Equal(s.Status, rail.SettlementPending)
		is.Equal(e.psp.SendCount(), 1) // never a second send
		e.settle()
		s, err = e.d.Status(ctx, o)
		is.NoErr(err)
		is.Equal(s.Status, rail.SettlementConfirmed)
		status, e2e, ok := e.psp.Sent(o.ID)
		is.True(ok)
		is.Equal(status, "REALIZADO")
		is.Equal(s.EndToEndID, e2e) // the Pix's endToEndId
	})
	t.Run("Refused", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t, apipixtest.Options{})
		o := rail.PixOrder{ID: "refused1", Kind: rail.OrderPayment, Key: apipixtest.KeyRefused, Value: 100, SentAt: t0}
		_, err := e.d.Send(ctx, o)
		r, ok := rail.AsRefused(err)
		is.True(ok) // a *rail.RefusedError
		is.Equal(r.Reason, rail.ReasonInvalidPixKey)
		is.Equal(e.psp.SendCount(), 0) // nothing was sent
		_, err = e.d.Status(ctx, o)
		is.True(errors.Is(err, rail.ErrUnknownOrder)) // the PSP has no record of it
	})
	t.Run("ServerError", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t, apipixtest.Options{})
		o := rail.PixOrder{ID: "p500", Kind: rail.OrderPayment, Key: "ana@example.com", Value: 100, SentAt: t0}
		for _, status := range []int{http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusTooManyRequests, http.StatusForbidden} {
			e.psp.FailNext(http.MethodPut, "/v3/gn/pix/", status, 1)
			_, err := e.d.Send(ctx, o)
			is.True(err != nil)
			_, refused := rail.AsRefused(err)
			is.True(!refused) // not a definite refusal
		}
		_, err := e.d.Send(ctx, o)
		is.NoErr(err) // sent at last
		is.Equal(e.psp.SendCount(), 1)
	})
	t.Run("Failing", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t, apipixtest.Options{})
		o := rail.PixOrder{ID: "fails1", Kind: rail.OrderPayment, Key: apipixtest.KeyFails, Value: 100, SentAt: t0}
		s, err := e.d.Send(ctx, o)
		is.NoErr(err)
		is.Equal(s.Status, rail.SettlementPending)
		e.settle()
		s, err = e.d.Status(ctx, o)
		is.NoErr(err)
		is.Equal(s.Status, rail.SettlementFailed) // NAO_REALIZADO
		is.True(s.Reason != "")
		is.Equal(s.EndToEndID, "")
	})
	t.Run("NoSender", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t, apipixtest.Options{})
		e.d.SetSender(nil)
		o := rail.PixOrder{ID: "p1", Kind: rail.OrderPayment, Key: "ana@example.com", Value: 100, SentAt: t0}
		_, err := e.d.Send(ctx, o)
		r, ok := rail.AsRefused(err)
		is.True(ok) // refused: nothing can send it
		is.True(strings.Contains(r.Detail, "sender"))
		_, err = e.d.Status(ctx, o)
		is.True(err != nil)
		is.True(!errors.Is(err, rail.ErrUnknownOrder)) // never "unknown", which would send it again
	})
	t.Run("WithdrawalWithoutKey", func(t *testing.T) {
		is := is.New(t)
		c := apipixtest.NewClock(t0)
		psp := apipixtest.New(t, apipixtest.Options{Now: c.Now})
		cfg := config(psp, c)
		cfg.WithdrawalKey = ""
		d, err := apipix.New(cfg)
		is.NoErr(err)
		d.SetSender(apipix.NewEfiSender(d))
		_, err = d.Send(ctx, rail.PixOrder{ID: "w1", Kind: rail.OrderWithdrawal, Value: 100, SentAt: t0})
		r, ok := rail.AsRefused(err)
		is.True(ok) // refused
		is.True(strings.Contains(r.Detail, "withdrawal key"))
		is.Equal(psp.SendCount(), 0)
	})
	t.Run("Withdrawal", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t, apipixtest.Options{})
		o := rail.PixOrder{ID: "w1", Kind: rail.OrderWithdrawal, Value: 100, SentAt: t0}
		_, err := e.d.Send(ctx, o)
		is.NoErr(err)
		is.Equal(e.psp.SendCount(), 1) // sent to the withdrawal key

		// The Service's withdrawal of a company names the company's key, which at a PSP
		// is the key it receives at: that too goes to the withdrawal key.
		o = rail.PixOrder{ID: "w2", Kind: rail.OrderWithdrawal, Key: e.psp.PixKey(), Value: 100, SentAt: t0}
		_, err = e.d.Send(ctx, o)
		is.NoErr(err)
		is.Equal(e.psp.SendCount(), 2)
		is.Equal(e.psp.Violations(), []string(nil)) // not a send to itself
	})
}

func TestRefund(t *testing.T) {
	// paid starts an env whose PSP received a Pix of R$ 10,00 from payer.
	paid := func(t *testing.T) (*env, rail.ReceivedPix) {
		t.Helper()
		e := newEnv(t, apipixtest.Options{})
		px, err := e.psp.Pay("estatico1", 1000, payer, "")
		is.New(t).NoErr(err)
		return e, px
	}
	// refund is the order id that refunds value centavos of the Pix e2e.
	refund := func(id, e2e string, value int64) rail.PixOrder {
		return rail.PixOrder{ID: id, Kind: rail.OrderRefund, EndToEndID: e2e, Value: value, SentAt: t0}
	}
	t.Run("OverTheTotal", func(t *testing.T) {
		is := is.New(t)
		e, px := paid(t)
		first := refund("refundA", px.EndToEndID, 600)
		_, err := e.d.Send(ctx, first)
		is.NoErr(err) // 6.00 of 10.00
		second := refund("refundB", px.EndToEndID, 600)
		_, err = e.d.Send(ctx, second)
		r, ok := rail.AsRefused(err)
		is.True(ok)                         // 12.00 of 10.00 is refused
		is.Equal(r.Reason, rail.ReasonAM02) // as more than the Pix allows
		_, ok = e.psp.Refund(px.EndToEndID, "refundB")
		is.True(!ok) // and nothing was refunded
		_, err = e.d.Status(ctx, second)
		is.True(errors.Is(err, rail.ErrUnknownOrder))

		_, err = e.d.Send(ctx, first)
		is.NoErr(err) // the first again is the first, not a third refund
	})
	t.Run("UnknownPix", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t, apipixtest.Options{})
		o := refund("refundX", "E09089356202611221200abcdefghijk", 100)
		_, err := e.d.Send(ctx, o)
		_, ok := rail.AsRefused(err)
		is.True(ok) // no such Pix: nothing refunded
	})
	t.Run("TooOld", func(t *testing.T) {
		is := is.New(t)
		e, px := paid(t)
		e.clock.Advance(91 * 24 * time.Hour)
		_, err := e.d.Send(ctx, refund("late", px.EndToEndID, 100))
		r, ok := rail.AsRefused(err)
		is.True(ok) // after 90 days
		is.True(strings.Contains(r.Detail, "90 days"))
	})
	t.Run("Settles", func(t *testing.T) {
		is := is.New(t)
		e, px := paid(t)
		o := refund("refund-with-dash", px.EndToEndID, 1000)
		s, err := e.d.Send(ctx, o)
		is.NoErr(err)
		is.Equal(s.Status, rail.SettlementPending)
		is.Equal(s.BankRef, apipix.OrderRef(o.ID)) // a hashed devolução id
		e.settle()
		s, err = e.d.Status(ctx, o)
		is.NoErr(err)
		is.Equal(s.Status, rail.SettlementConfirmed)
		status, ok := e.psp.Refund(px.EndToEndID, apipix.OrderRef(o.ID))
		is.True(ok)
		is.Equal(status, "DEVOLVIDO")
	})
}

func TestWebhook(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, apipixtest.Options{})
	is.Equal(e.psp.WebhookURL(), e.hook.srv.URL+"/psp/webhook?hmac=x&ignorar=") // registered as given
	c := rail.Charge{TxID: "hookcharge00000000000000000001", Value: 4200, Expires: t0.Add(time.Hour)}
	_, err := e.d.IssueCharge(ctx, c)
	is.NoErr(err)
	px, err := e.psp.Pay(c.TxID, 4200, payer, "obrigado")
	is.NoErr(err)
	e.psp.SetNotify(apipixtest.NotifyTwice)
	px2, err := e.psp.Pay("estatico2", 100, payer, "")
	is.NoErr(err)
	is.Equal(len(e.psp.NotifyErrors()), 0) // the webhook took every POST
	got, paths, errs := e.hook.notifications()
	is.Equal(len(errs), 0) // and parsed every one
	is.Equal(len(got), 3)  // once, then twice
	for _, p := range paths {
		is.Equal(p, "/psp/webhook?hmac=x&ignorar=/pix") // /pix landed in the ignored parameter
	}
	is.Equal(len(got[0].Pix), 1)
	is.Equal(got[0].Pix[0].EndToEndID, px.EndToEndID)
	is.Equal(got[0].Pix[0].TxID, c.TxID)
	is.Equal(got[0].Pix[0].Value, int64(4200))
	is.Equal(got[1], got[2])                           // the same body twice
	is.Equal(got[1].Pix[0].EndToEndID, px2.EndToEndID) // one Pix

	err = e.d.RegisterWebhook(ctx, "ftp://example.com/hook")
	var inv *rail.InvalidError
	is.True(errors.As(err, &inv)) // not an https URL
}

func TestLoadCertificate(t *testing.T) {
	is := is.New(t)
	c := apipixtest.NewClock(t0)
	psp := apipixtest.New(t, apipixtest.Options{Now: c.Now})
	certFile, keyFile, caFile, err := psp.WritePEM(t.TempDir())
	is.NoErr(err)
	cert, roots, err := apipix.LoadCertificate(certFile, keyFile, caFile)
	is.NoErr(err) // the PEM files
	is.True(roots != nil)
	cfg := config(psp, c)
	cfg.Certificate, cfg.RootCAs = cert, roots
	d, err := apipix.New(cfg)
	is.NoErr(err)
	_, err = d.ListReceived(ctx, rail.ReceivedQuery{From: t0.Add(-time.Hour), To: t0})
	is.NoErr(err) // a call over mutual TLS with them

	_, roots, err = apipix.LoadCertificate(certFile, keyFile, "")
	is.NoErr(err)
	is.True(roots == nil) // no CA file: the system's roots
	_, _, err = apipix.LoadCertificate(certFile, certFile, "")
	is.True(err != nil) // a certificate is no key
}

// Without the client certificate the PSP takes no call, the token call included.
func TestMutualTLS(t *testing.T) {
	is := is.New(t)
	c := apipixtest.NewClock(t0)
	psp := apipixtest.New(t, apipixtest.Options{Now: c.Now})
	cfg := config(psp, c)
	cfg.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: psp.RootCAs(), MinVersion: tls.VersionTLS12}}}
	d, err := apipix.New(cfg)
	is.NoErr(err)
	_, err = d.ListReceived(ctx, rail.ReceivedQuery{From: t0.Add(-time.Hour), To: t0})
	is.True(err != nil)             // the handshake fails
	is.Equal(psp.TokensIssued(), 0) // no token without the certificate

	cfg.HTTPClient, cfg.Certificate = nil, tls.Certificate{}
	_, err = apipix.New(cfg)
	is.True(err != nil) // a configuration without a certificate is refused
}

func TestNew_Invalid(t *testing.T) {
	ok := apipix.Config{BaseURL: "https://pix.example.com/v2", ClientID: "id", ClientSecret: "secret", PixKey: "pix@example.com",
		HTTPClient: http.DefaultClient}
	cases := []struct {
		name string
		edit func(*apipix.Config)
	}{
		{"NoBaseURL", func(c *apipix.Config) { c.BaseURL = "" }},
		{"RelativeBaseURL", func(c *apipix.Config) { c.BaseURL = "/v2" }},
		{"PlainHTTP", func(c *apipix.Config) { c.BaseURL = "http://pix.example.com/v2" }},
		{"BaseURLWithQuery", func(c *apipix.Config) { c.BaseURL = "https://pix.example.com/v2?x=1" }},
		{"BadTokenURL", func(c *apipix.Config) { c.TokenURL = "http://auth.example.com/token" }},
		{"NoClientID", func(c *apipix.Config) { c.ClientID = "" }},
		{"NoSecret", func(c *apipix.Config) { c.ClientSecret = "" }},
		{"NoKey", func(c *apipix.Config) { c.PixKey = "" }},
		{"BadKey", func(c *apipix.Config) { c.PixKey = "not a key" }},
		{"BadWithdrawalKey", func(c *apipix.Config) { c.WithdrawalKey = "not a key" }},
		{"NegativePoll", func(c *apipix.Config) { c.PollInterval = -1 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			_, err := apipix.New(c)
			is.New(t).True(err != nil) // refused
		})
	}
	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		d, err := apipix.New(ok)
		is.NoErr(err)
		is.Equal(d.Origin(), "https://pix.example.com")
		is.Equal(d.PollInterval(), apipix.DefaultPollInterval)
		c := ok
		c.BaseURL = "http://127.0.0.1:8080/v2/"
		d, err = apipix.New(c)
		is.NoErr(err) // plain http to a loopback host, for tests
		is.Equal(d.BaseURL(), "http://127.0.0.1:8080/v2")
	})
}

func TestResolveKey(t *testing.T) {
	is := is.New(t)
	d, err := apipix.New(apipix.Config{BaseURL: "https://pix.example.com/v2", ClientID: "id", ClientSecret: "secret",
		PixKey: "pix@example.com", HTTPClient: http.DefaultClient})
	is.NoErr(err)
	_, err = d.ResolveKey(ctx, "52998224725", "")
	is.True(errors.Is(err, rail.ErrNoKeyLookup)) // a valid key: no look-up
	_, err = d.ResolveKey(ctx, "52998224726", brcode.KeyCPF)
	var inv *rail.InvalidError
	is.True(errors.As(err, &inv)) // a CPF with a wrong check digit
	is.Equal(inv.Field, "key")
}

// TestToken_FormThenJSON: the token request is form-encoded, as OAuth2's client
// credentials grant is; a PSP that answers it 400 gets Efí's JSON body instead, and keeps
// getting it.
func TestToken_FormThenJSON(t *testing.T) {
	is := is.New(t)
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/oauth/token":
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, r.Header.Get("Content-Type")+" "+string(b))
			mu.Unlock()
			if r.Header.Get("Content-Type") != "application/json" {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"nome":"json_invalido","mensagem":"corpo inválido"}`)
				return
			}
			io.WriteString(w, `{"access_token":"tok","token_type":"Bearer","expires_in":3600}`)
		default:
			if r.Header.Get("Authorization") != "Bearer tok" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			io.WriteString(w, `{}`)
		}
	}))
	defer srv.Close()
	d, err := apipix.New(apipix.Config{BaseURL: srv.URL + "/v2", ClientID: "id", ClientSecret: "secret",
		PixKey: "pix@psp.example.com", HTTPClient: srv.Client()})
	is.NoErr(err)
	is.NoErr(d.Do(ctx, http.MethodGet, d.BaseURL()+"/loc", nil, nil))
	is.Equal(bodies, []string{"application/x-www-form-urlencoded grant_type=client_credentials", `application/json {"grant_type":"client_credentials"}`})
}
