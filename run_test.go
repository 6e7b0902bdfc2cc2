package payments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// runWait bounds how long a Run test waits for something Run does (no sleeping: it waits
// on a channel, and a failure ends the wait at once).
const runWait = 10 * time.Second

// chanSender answers every delivery 200 and hands the bodies of events (not the test call
// on create) to got.
type chanSender struct{ got chan []byte }

func (c chanSender) SendWebhook(ctx context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
	if !bytes.Contains(r.Body, []byte(`"teste_webhook"`)) {
		select {
		case c.got <- r.Body:
		case <-ctx.Done():
			return payments.WebhookResponse{}, ctx.Err()
		}
	}
	return payments.WebhookResponse{Status: http.StatusOK}, nil
}

// chanMailer hands the bodies of the e-mails it is asked to send to got.
type chanMailer struct{ got chan []byte }

func (c chanMailer) SendMail(ctx context.Context, m payments.MailMessage) error {
	select {
	case c.got <- m.Body:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitFor returns the first body from got that holds want, skipping others, or fails the
// test after runWait.
func waitFor(t *testing.T, got <-chan []byte, want string) []byte {
	t.Helper()
	timeout := time.After(runWait)
	for {
		select {
		case b := <-got:
			if strings.Contains(string(b), want) {
				return b
			}
		case <-timeout:
			t.Fatalf("nothing holding %q arrived within %v", want, runWait)
			return nil
		}
	}
}

// startRun runs svc.Run until the test stops it: stop cancels its context and returns
// what Run returned, failing the test if Run does not return within runWait, or leaves a
// goroutine of its own behind.
func startRun(t *testing.T, svc *payments.Service) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	stopped := false
	stop = func() error {
		t.Helper()
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if left := runGoroutines(); left != "" {
				t.Errorf("Run returned and left a goroutine:\n%s", left)
			}
			return err
		case <-time.After(runWait):
			t.Fatalf("Run did not return within %v of its context ending", runWait)
			return nil
		}
	}
	t.Cleanup(func() { stop() })
	return stop
}

// runGoroutines is the stack of every goroutine that Run started (its loops and the webhook
// worker), none when all have stopped.
func runGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var left []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "payments.(*Service).Run.func") {
			left = append(left, g)
		}
	}
	return strings.Join(left, "\n\n")
}

func newRunService(t *testing.T, st store.Store, opts payments.Options) (*payments.Service, *payments.ManualClock) {
	t.Helper()
	clock := payments.NewManualClock(t0)
	opts.Clock = clock
	opts.DefaultCompany = payments.CreateCompanyParams{Name: "Loja Exemplo", PixKey: "pix@loja.example.com", MerchantName: "Loja Exemplo", MerchantCity: "Sao Paulo"}
	svc, err := payments.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return svc, clock
}

// TestService_Run: Run delivers a webhook as soon as its event commits, does the due
// work the clock makes due on its interval (a charge expires, and its event is delivered),
// refuses a second Run while it goes on, and stops with its context, leaving nothing
// running; then it can be run again.
func TestService_Run(t *testing.T) {
	// Not parallel: the leak check of stop (startRun) looks at every goroutine of the
	// process, and parallel tests run only once the others are done.
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			snd := chanSender{got: make(chan []byte, 16)}
			svc, clock := newRunService(t, st.open(t), payments.Options{WebhookSender: snd, DueInterval: time.Millisecond})
			for _, ev := range []string{payments.EventChargeCreated, payments.EventChargeExpired} {
				_, err := svc.CreateWebhook(ctx, payments.CreateWebhookParams{URL: "https://hooks.example.com/" + ev, Event: svc.EventName(ev)})
				is.NoErr(err)
			}
			stop := startRun(t, svc)

			_, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: 100, ExpiresIn: 300})
			is.NoErr(err)
			waitFor(t, snd.got, svc.EventName(payments.EventChargeCreated)) // delivered by Run's worker
			is.True(runGoroutines() != "")                                  // the leak check sees Run's goroutines while it runs

			err = svc.Run(ctx)
			is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // one Run at a time
			other, err := svc.Company(ctx, payments.DefaultCompanyID)
			is.NoErr(err)
			is.Equal(payments.ErrorCode(other.Run(ctx)), payments.EPRECONDITION) // whichever Service of the store asks

			clock.Advance(301 * time.Second)
			waitFor(t, snd.got, svc.EventName(payments.EventChargeExpired)) // the due work ran on its tick
			c, err := svc.GetCharge(ctx, "c1")
			is.NoErr(err)
			is.Equal(c.Status, payments.ChargeExpired) // recorded as expired

			is.NoErr(stop()) // nil once everything stopped, with no goroutine left

			stop = startRun(t, svc) // a stopped Run may run again
			_, err = svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c2", Value: 100})
			is.NoErr(err)
			b := waitFor(t, snd.got, svc.EventName(payments.EventChargeCreated))
			is.True(strings.Contains(string(b), `"c2"`)) // the second charge's event
			is.NoErr(stop())
		})
	}
}

// TestService_Run_NoSender: without a WebhookSender Run does not fail: e-mail webhooks
// still go through the Mailer, and it stops cleanly.
func TestService_Run_NoSender(t *testing.T) {
	// Not parallel: the leak check of stop (startRun) looks at every goroutine of the
	// process, and parallel tests run only once the others are done.
	is := is.New(t)
	mail := chanMailer{got: make(chan []byte, 16)}
	svc, _ := newRunService(t, stores[0].open(t), payments.Options{Mailer: mail})
	_, err := svc.CreateWebhook(ctx, payments.CreateWebhookParams{Email: "ops@loja.example.com", Event: svc.EventName(payments.EventChargeCreated)})
	is.NoErr(err)
	stop := startRun(t, svc)
	_, err = svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: 100})
	is.NoErr(err)
	waitFor(t, mail.got, `"c1"`) // mailed by Run's worker
	is.NoErr(stop())             // nil, nothing left running
}

// TestService_Run_Reconciles: a Pix the bank received but never reported (a lost webhook)
// is recorded by Run's first reconciliation, for the company whose key it was sent to, and
// that company's webhook gets its event; another company's webhook gets nothing of it.
func TestService_Run_Reconciles(t *testing.T) {
	// Not parallel: the leak check of stop (startRun) looks at every goroutine of the
	// process, and parallel tests run only once the others are done.
	is := is.New(t)
	snd := chanSender{got: make(chan []byte, 16)}
	clock := payments.NewManualClock(t0)
	bank := payments.NewSandboxRail(clock, 0)
	svc, err := payments.New(stores[0].open(t), payments.Options{Clock: clock, Rail: bank, WebhookSender: snd,
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"}})
	is.NoErr(err)
	co, err := svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Outra", PixKey: "pix@outra.example.com"})
	is.NoErr(err)
	other, err := svc.Company(ctx, co.ID)
	is.NoErr(err)
	for _, s := range []*payments.Service{svc, other} {
		_, err := s.CreateWebhook(ctx, payments.CreateWebhookParams{URL: "https://hooks.example.com/" + s.CompanyID(),
			Event: s.EventName(payments.EventTransactionReceived)})
		is.NoErr(err)
	}
	is.NoErr(bank.Receive(rail.ReceivedPix{EndToEndID: "E18236120202611221101s0000000001", Key: "pix@loja.example.com",
		Value: 700, At: t0.Add(-time.Hour), PayerName: "Ana Souza"}))

	stop := startRun(t, svc)
	b := waitFor(t, snd.got, "E18236120202611221101s0000000001") // recorded, and its event delivered
	is.True(strings.Contains(string(b), `"value":700`))          // the Pix the bank listed
	is.NoErr(stop())
	select {
	case b := <-snd.got:
		t.Errorf("another delivery: %s", b) // the other company's webhook gets nothing
	default:
	}
	a, err := svc.DefaultAccount(ctx)
	is.NoErr(err)
	is.Equal(a.Balance.Total, int64(650)) // credited once, less the default fee of 50
	res, err := svc.Reconcile(ctx, t0.Add(-2*time.Hour), t0)
	is.NoErr(err)
	is.Equal(res.Known, 1) // Run recorded it already: reconciling again changes nothing
}

// ExampleService_Run: one Run does a process's background work; here its worker delivers
// the webhook of a charge as soon as the charge commits. A real sender POSTs the event
// (httpadapter.NewWebhookSender); this one hands it to a channel.
func ExampleService_Run() {
	sent := make(chan []byte, 1)
	svc, err := payments.New(memory.New(), payments.Options{
		WebhookSender:  chanSender{got: sent},
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"},
	})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- svc.Run(ctx) }()

	if _, err := svc.CreateWebhook(ctx, payments.CreateWebhookParams{
		URL: "https://hooks.example.com/charges", Event: svc.EventName(payments.EventChargeCreated),
	}); err != nil {
		panic(err)
	}
	if _, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "order-1", Value: 1990}); err != nil {
		panic(err)
	}
	var e struct {
		Event  string
		Charge struct{ CorrelationID string }
	}
	if err := json.Unmarshal(<-sent, &e); err != nil {
		panic(err)
	}
	fmt.Println(e.Event, e.Charge.CorrelationID)

	stop()             // the process stops:
	fmt.Println(<-ran) // Run returns once its work has stopped
	// Output:
	// OPENPIX:CHARGE_CREATED order-1
	// <nil>
}
