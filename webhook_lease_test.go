package payments_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store"
)

// senderFunc is a WebhookSender made of a function.
type senderFunc func(ctx context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error)

func (f senderFunc) SendWebhook(ctx context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
	return f(ctx, r)
}

// tally counts deliveries by webhook-id, leaving out the test call made on create.
type tally struct {
	mu  sync.Mutex
	ids map[string]int
}

func (c *tally) add(r payments.WebhookRequest) {
	if strings.Contains(string(r.Body), "teste_webhook") {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[string]int{}
	}
	c.ids[r.Header.Get("webhook-id")]++
}

// counts returns the number of distinct events delivered and of deliveries.
func (c *tally) counts() (distinct, total int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.ids {
		total += n
	}
	return len(c.ids), total
}

// process is one more Service on st, as another server process sharing the database
// would be: its own delivery machinery, the test's clock.
func process(t *testing.T, st store.Store, clock payments.Clock, sender payments.WebhookSender) *payments.Service {
	t.Helper()
	svc, err := payments.New(st, payments.Options{Clock: clock, WebhookSender: sender, WebhookLease: time.Minute,
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja Exemplo", PixKey: "pix@loja.example.com", MerchantName: "Loja", MerchantCity: "Sao Paulo"}})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestService_WebhookLease: a process that claimed a webhook's event keeps the others off
// it while it delivers; when it dies mid-delivery (nothing recorded), another delivers
// the event once the lease has run out.
func TestService_WebhookLease(t *testing.T) {
	t.Parallel()
	for _, stt := range stores {
		t.Run(stt.name, func(t *testing.T) {
			is := is.New(t)
			st := stt.open(t)
			t.Cleanup(func() { st.Close() })
			clock := payments.NewManualClock(t0)
			entered := make(chan struct{}, 1)
			dying := process(t, st, clock, senderFunc(func(ctx context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
				entered <- struct{}{}
				<-ctx.Done() // hangs until the process "dies"
				return payments.WebhookResponse{}, ctx.Err()
			}))
			var got tally
			other := process(t, st, clock, senderFunc(func(ctx context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
				got.add(r)
				return payments.WebhookResponse{Status: 200}, nil
			}))
			createWebhook(t, other, "https://hooks.example.com/in", payments.EventChargeCreated)
			for i := range 3 {
				newCharge(t, other, fmt.Sprint("c", i))
			}

			dctx, die := context.WithCancel(ctx)
			done := make(chan error)
			go func() { done <- dying.RunWebhooks(dctx) }()
			<-entered // the dying process holds the first event
			is.NoErr(other.RunWebhooks(ctx))
			n, _ := got.counts()
			is.Equal(n, 0) // the other process keeps off the leased webhook
			die()
			if err := <-done; err != nil { // the dying pass may end on its own cancellation
				is.Equal(payments.ErrorCode(err), payments.ECANCELED)
			}
			is.NoErr(other.RunWebhooks(ctx))
			n, _ = got.counts()
			is.Equal(n, 0) // nothing recorded, but the lease still runs

			clock.Advance(time.Minute + time.Second)
			is.NoErr(other.RunWebhooks(ctx))
			n, total := got.counts()
			is.Equal(n, 3)     // the lease ran out: every event delivered, the cut-off one included
			is.Equal(total, 3) // each once by this process
		})
	}
}

// TestService_WebhookLease_TwoProcesses: two processes delivering one store's events at
// the same time deliver each event once (with no lease each would send what it claimed).
func TestService_WebhookLease_TwoProcesses(t *testing.T) {
	t.Parallel()
	for _, stt := range stores {
		t.Run(stt.name, func(t *testing.T) {
			is := is.New(t)
			st := stt.open(t)
			t.Cleanup(func() { st.Close() })
			clock := payments.NewManualClock(t0)
			var got tally
			send := senderFunc(func(ctx context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
				got.add(r)
				return payments.WebhookResponse{Status: 200}, nil
			})
			a, b := process(t, st, clock, send), process(t, st, clock, send)
			createWebhook(t, a, "https://hooks.example.com/a", payments.EventChargeCreated)
			createWebhook(t, b, "https://hooks.example.com/b", payments.EventChargeCreated)
			const charges = 10
			for i := range charges {
				newCharge(t, a, fmt.Sprint("c", i))
			}
			var wg sync.WaitGroup
			for _, svc := range []*payments.Service{a, b, a, b} {
				wg.Add(1)
				go func() { defer wg.Done(); is.NoErr(svc.RunWebhooks(ctx)) }()
			}
			wg.Wait()
			is.NoErr(a.RunWebhooks(ctx))
			is.NoErr(b.RunWebhooks(ctx))
			n, total := got.counts()
			is.Equal(n, 2*charges)     // every event to both webhooks
			is.Equal(total, 2*charges) // none twice
		})
	}
}

// TestService_RunWebhooks_WaitsForBusyWebhook: a pass finds a webhook another pass of the
// process is delivering to (the server's worker, woken by a commit) and waits for it,
// then serves what is left, so AdvanceClock moves the clock on only after the deliveries
// due before it. Before, the pass skipped the busy webhook: the move answered at once and
// the worker sent the events later, stamped with a clock moved on by days.
func TestService_RunWebhooks_WaitsForBusyWebhook(t *testing.T) {
	is := is.New(t)
	st := stores[0].open(t)
	t.Cleanup(func() { st.Close() })
	clock := payments.NewManualClock(t0)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var got tally
	var stamps []string // webhook-timestamp of each delivery
	var mu sync.Mutex
	svc := process(t, st, clock, senderFunc(func(ctx context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
		if !strings.Contains(string(r.Body), "teste_webhook") {
			select {
			case entered <- struct{}{}: // the first delivery hangs until released
				<-release
			default:
			}
			mu.Lock()
			stamps = append(stamps, r.Header.Get("webhook-timestamp"))
			mu.Unlock()
		}
		got.add(r)
		return payments.WebhookResponse{Status: 200}, nil
	}))
	waiting := make(chan struct{}, 1)
	payments.SetWebhookWaitHook(t, func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	})
	createWebhook(t, svc, "https://hooks.example.com/in", payments.EventChargeCreated)
	newCharge(t, svc, "c0")
	newCharge(t, svc, "c1")

	worker := make(chan error, 1)
	go func() { worker <- svc.RunWebhooks(ctx) }()
	<-entered // the worker is delivering c0's event
	moved := make(chan error, 1)
	go func() {
		_, err := svc.AdvanceClock(ctx, clock, time.Hour)
		moved <- err
	}()
	select {
	case <-waiting: // the move's pass waits for the worker
	case err := <-moved:
		t.Fatalf("the clock moved (err %v) while a delivery due before it was in flight", err)
	}
	close(release)
	is.NoErr(<-moved)
	is.NoErr(<-worker)
	n, total := got.counts()
	is.Equal(n, 2)     // both events delivered
	is.Equal(total, 2) // once each
	want := fmt.Sprint(t0.Unix())
	is.Equal(stamps, []string{want, want}) // at the time they were due, not an hour later
}

// TestService_WebhookLease_LateOutcome: a process whose delivery outlived its lease (so
// another process claimed the event and is delivering it) records its outcome without
// ending the other's lease: neither it nor any process claims the next event until the
// other's delivery ends, so one webhook's events still go out one at a time, in order.
// Before, the late outcome cleared the lease and the next event went out while the first
// was still in flight.
func TestService_WebhookLease_LateOutcome(t *testing.T) {
	t.Parallel()
	for _, stt := range stores {
		t.Run(stt.name, func(t *testing.T) {
			is := is.New(t)
			st := stt.open(t)
			t.Cleanup(func() { st.Close() })
			clock := payments.NewManualClock(t0)
			var mu sync.Mutex
			var log []string // "<process> <webhook-id>", as deliveries start
			hanging := func(name string, entered chan<- struct{}, release <-chan struct{}) payments.WebhookSender {
				first := true
				return senderFunc(func(ctx context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
					if strings.Contains(string(r.Body), "teste_webhook") {
						return payments.WebhookResponse{Status: 200}, nil
					}
					mu.Lock()
					log = append(log, name+" "+r.Header.Get("webhook-id"))
					hang := first
					first = false
					mu.Unlock()
					if hang {
						entered <- struct{}{}
						<-release
					}
					return payments.WebhookResponse{Status: 200}, nil
				})
			}
			enteredA, releaseA := make(chan struct{}, 1), make(chan struct{})
			enteredB, releaseB := make(chan struct{}, 1), make(chan struct{})
			a := process(t, st, clock, hanging("a", enteredA, releaseA))
			b := process(t, st, clock, hanging("b", enteredB, releaseB))
			w := createWebhook(t, a, "https://hooks.example.com/in", payments.EventChargeCreated)
			newCharge(t, a, "c0")
			newCharge(t, a, "c1")

			doneA := make(chan error, 1)
			go func() { doneA <- a.RunWebhooks(ctx) }()
			<-enteredA // a delivers c0's event, slowly
			clock.Advance(time.Minute + time.Second)
			doneB := make(chan error, 1)
			go func() { doneB <- b.RunWebhooks(ctx) }()
			<-enteredB // a's lease ran out: b delivers c0's event too
			close(releaseA)
			is.NoErr(<-doneA) // a records c0 delivered...
			mu.Lock()
			is.Equal(len(log), 2) // ...and sends nothing more while b holds the lease
			mu.Unlock()
			close(releaseB)
			is.NoErr(<-doneB)
			is.NoErr(b.RunWebhooks(ctx)) // b's outcome freed the webhook: c1 goes out
			mu.Lock()
			defer mu.Unlock()
			is.Equal(len(log), 3)
			msg := func(i int) string { return log[i][2:] }
			is.Equal(log[0][:2]+log[1][:2]+log[2][:2], "a b b ")
			is.True(strings.HasPrefix(msg(0), "msg_"+w.ID+"_"))
			is.Equal(msg(0), msg(1))  // c0's event, from a and from b
			is.True(msg(2) != msg(0)) // then c1's, once
		})
	}
}

// TestService_WebhookLease_NoSender: a process without a WebhookSender (a tool, a
// migration) running the due pass on a shared store leaves the webhooks it cannot serve
// as they were, unleased, so a server delivers their events at once. Before, it leased
// each and kept the servers off it until the lease ran out.
func TestService_WebhookLease_NoSender(t *testing.T) {
	t.Parallel()
	for _, stt := range stores {
		t.Run(stt.name, func(t *testing.T) {
			is := is.New(t)
			st := stt.open(t)
			t.Cleanup(func() { st.Close() })
			clock := payments.NewManualClock(t0)
			var got tally
			server := process(t, st, clock, senderFunc(func(ctx context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
				got.add(r)
				return payments.WebhookResponse{Status: 200}, nil
			}))
			tool := process(t, st, clock, nil)
			createWebhook(t, server, "https://hooks.example.com/x", payments.EventChargeCreated)
			newCharge(t, server, "c1")
			is.NoErr(tool.RunDue(ctx)) // nothing sent: it has no sender
			n, _ := got.counts()
			is.Equal(n, 0)
			is.NoErr(server.RunDue(ctx))
			n, _ = got.counts()
			is.Equal(n, 1) // delivered by the process with a sender, without waiting for a lease
		})
	}
}
