package payments_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// hangingReceivers is a WebhookSender whose receivers at hang.example.com hold every event
// (not the test call made on create) until release is closed or the attempt ends; the
// others answer 200 at once. It reports each event a receiver got on got, by URL.
type hangingReceivers struct {
	release chan struct{}
	got     chan string
	mu      sync.Mutex
	hanging int // attempts held now
	most    int // the most held at once
}

func (h *hangingReceivers) SendWebhook(ctx context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
	if strings.Contains(string(r.Body), "teste_webhook") {
		return payments.WebhookResponse{Status: 200}, nil
	}
	if strings.Contains(r.URL, "hang.example.com") {
		h.mu.Lock()
		h.hanging++
		h.most = max(h.most, h.hanging)
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			h.hanging--
			h.mu.Unlock()
		}()
		h.got <- "holding " + r.URL
		select {
		case <-h.release:
		case <-ctx.Done():
			return payments.WebhookResponse{}, ctx.Err()
		}
	}
	h.got <- r.URL
	return payments.WebhookResponse{Status: 200}, nil
}

// TestService_ServeWebhooks: with a worker serving webhooks, a receiver that hangs holds
// back only its own webhook: another webhook of the same company and another company's
// are delivered meanwhile, and RunDue does not wait for it. A company gets at most its
// share of the turns (WebhookConcurrency/4): with two of its receivers hanging, its other
// webhooks wait for one of them. Served in passes (RunWebhooks in a loop, as examples/server did), one
// hanging receiver held every webhook's deliveries, every company's, until its attempt
// timed out.
func TestService_ServeWebhooks(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	h := &hangingReceivers{release: make(chan struct{}), got: make(chan string, 100)}
	clock := payments.NewManualClock(t0)
	svc, err := payments.New(memory.New(), payments.Options{Clock: clock, WebhookSender: h, WebhookConcurrency: 8,
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja"}})
	is.NoErr(err)
	hook := func(s *payments.Service, url string) {
		_, err := s.CreateWebhook(ctx, payments.CreateWebhookParams{Name: url, URL: url, Event: "OPENPIX:CHARGE_CREATED"})
		is.NoErr(err)
	}
	co, err := svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Outra"})
	is.NoErr(err)
	other, err := svc.Company(ctx, co.ID)
	is.NoErr(err)
	hook(svc, "https://hang.example.com/1")
	hook(svc, "https://ok.example.com/a")
	hook(other, "https://ok.example.com/b")

	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() {
		defer close(served)
		svc.ServeWebhooks(serveCtx, time.Hour) // woken by commits; the poll plays no part here
	}()
	seen := map[string]int{}
	await := func(want map[string]int) {
		t.Helper()
		for {
			done := true
			for k, n := range want {
				done = done && seen[k] >= n
			}
			if done {
				return
			}
			seen[<-h.got]++
		}
	}

	_, err = svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: 100})
	is.NoErr(err)
	await(map[string]int{"holding https://hang.example.com/1": 1, "https://ok.example.com/a": 1}) // the same company's, while one hangs
	is.NoErr(svc.RunDue(ctx))                                                                     // returns: the worker's deliveries are its own
	_, err = other.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c2", Value: 100})
	is.NoErr(err)
	await(map[string]int{"https://ok.example.com/b": 1}) // another company's

	hook(svc, "https://hang.example.com/2")
	hook(svc, "https://hang.example.com/3")
	_, err = svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c3", Value: 100})
	is.NoErr(err)
	for seen["holding https://hang.example.com/2"]+seen["holding https://hang.example.com/3"] == 0 {
		seen[<-h.got]++ // a second receiver of the company holds (which one depends on the webhooks' ids)
	}
	h.mu.Lock()
	is.Equal(h.hanging, 2) // the company's share of 8 turns: whatever else it has waits
	h.mu.Unlock()

	close(h.release)
	await(map[string]int{"https://hang.example.com/1": 2, "https://hang.example.com/2": 1, "https://hang.example.com/3": 1, "https://ok.example.com/a": 2}) // each in its turn
	stop()
	<-served
	is.Equal(h.most, 2)                           // never more than the share at once
	is.Equal(seen["https://ok.example.com/b"], 1) // and each event once
	is.Equal(seen["https://ok.example.com/a"], 2)
}
