package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/postgres"
	"github.com/pixfoundry/payments/store/postgres/pgtest"
)

// hookReceiver counts webhook deliveries by webhook-id and says when a set has arrived.
type hookReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	seen    map[string]int
	changed chan struct{} // receives (coalesced) after each delivery
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{seen: map[string]int{}, changed: make(chan struct{}, 1)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		if strings.Contains(string(b), "teste_webhook") {
			return // the test call on create
		}
		r.mu.Lock()
		r.seen[req.Header.Get("webhook-id")]++
		r.mu.Unlock()
		select {
		case r.changed <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(r.Close)
	return r
}

// missing is how many of ids have not arrived.
func (r *hookReceiver) missing(ids []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, id := range ids {
		if r.seen[id] == 0 {
			n++
		}
	}
	return n
}

// acks is a set of the correlationIDs some server answered 200 for.
type acks struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (a *acks) add(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ids == nil {
		a.ids = map[string]bool{}
	}
	a.ids[id] = true
}

func (a *acks) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.ids)
}

// post sends body and decodes the JSON answer; safe in goroutines (no t).
func post(method, url, appID, body string) (int, map[string]any) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", appID)
	res, err := client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// TestTwoServers_Postgres runs two server processes on one PostgreSQL database and sends
// payments, refunds, withdrawals and subaccount transfers to both at once, every
// correlationID to both. It then checks that nothing is overdrawn and the ledger audits
// clean, that each correlationID took effect once, that every event reached the webhook
// receiver, and that moving both processes' clocks to the same time generates each
// subscription period once.
func TestTwoServers_Postgres(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs two server processes")
	}
	is := is.New(t)
	db := pgtest.URL(t)
	bin, _ := buildServer(t)
	rcv := newHookReceiver(t)

	baseA, appID, _ := startProcess(t, bin, db, true)
	baseB, _, _ := startProcess(t, bin, db, false)
	bases := []string{baseA, baseB}
	for _, event := range []string{"OPENPIX:CHARGE_CREATED", "OPENPIX:CHARGE_COMPLETED"} {
		code, _ := post("POST", baseA+"/api/v1/webhook", appID,
			`{"webhook":{"name":"both","url":"`+rcv.URL+`","event":"`+event+`","isActive":true}}`)
		is.Equal(code, http.StatusOK) // the webhook is registered
	}
	for _, key := range []string{"s1@example.com", "s2@example.com"} {
		code, _ := post("POST", baseB+"/api/v1/subaccount", appID, `{"pixKey":"`+key+`","name":"`+key+`"}`)
		is.Equal(code, http.StatusOK) // the subaccount is created
	}
	// The checks read the database directly, as a third process.
	st, err := postgres.Open(context.Background(), db)
	is.NoErr(err)
	defer st.Close()
	svc, err := payments.New(st, payments.Options{})
	is.NoErr(err)
	ctx := context.Background()
	// waitDelivered waits until every CHARGE_CREATED and CHARGE_COMPLETED event so far has
	// reached the receiver, and returns how many there are.
	waitDelivered := func() int {
		t.Helper()
		webhooks, _, err := svc.ListWebhooks(ctx, "", payments.ListParams{})
		is.NoErr(err)
		byEvent := map[string]string{}
		for _, w := range webhooks {
			byEvent[w.Event] = w.ID
		}
		events, err := svc.Events(ctx, 0, payments.MaxLimit)
		is.NoErr(err)
		var want []string
		for _, ev := range events {
			if id, ok := byEvent[ev.Name]; ok {
				want = append(want, fmt.Sprintf("msg_%s_%d", id, ev.Seq))
			}
		}
		deadline := time.After(2 * time.Minute)
		for rcv.missing(want) > 0 {
			select {
			case <-rcv.changed:
			case <-deadline:
				t.Fatalf("%d of %d events never reached the receiver", rcv.missing(want), len(want))
			}
		}
		return len(want)
	}

	code, body := post("GET", baseA+"/api/v1/account/", appID, "")
	is.Equal(code, http.StatusOK)
	accountID := body["accounts"].([]any)[0].(map[string]any)["accountId"].(string)

	// Every step's request goes to both servers at once: one correlationID, two processes.
	var charges, refunds, transfers acks
	both := func(path, method, body string, ok func(string)) {
		var wg sync.WaitGroup
		for _, base := range bases {
			wg.Go(func() {
				if code, _ := post(method, base+path, appID, body); code == http.StatusOK && ok != nil {
					ok(base)
				}
			})
		}
		wg.Wait()
	}
	const workers, rounds = 4, 12
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range rounds {
				corr := fmt.Sprintf("c-%d-%d", g, i)
				sub := ""
				if i%2 == 0 {
					sub = `,"subaccount":"s1@example.com"`
				}
				both("/api/v1/charge", "POST", `{"correlationID":"`+corr+`","value":1000`+sub+`}`, func(string) { charges.add(corr) })
				both("/openpix/testing?transactionID="+corr, "GET", "", nil)
				both("/api/v1/charge/"+corr+"/refund", "POST", `{"correlationID":"r-`+corr+`","value":100}`, func(string) { refunds.add("r-" + corr) })
				both("/api/v1/account/"+accountID+"/withdraw", "POST", `{"value":400}`, nil) // more than is left: some fail
				both("/api/v1/subaccount/transfer", "POST", `{"value":100,"fromPixKey":"s1@example.com","toPixKey":"s2@example.com","correlationID":"t-`+corr+`"}`,
					func(string) { transfers.add("t-" + corr) })
			}
		})
	}
	wg.Wait()

	// Every event delivered before the clocks move: a jump of the clock would end the lease
	// of a delivery in flight, and the other process would send that event again.
	is.True(waitDelivered() >= 2*charges.len()) // created and completed, at least

	// A subscription, then both clocks moved by the same offset, twice, one process after
	// the other: both run the due pass over the same periods. Not at the same time: moving
	// a clock steps through the moments work falls due (payments.Service.AdvanceClock), so
	// two processes moving theirs at once stand at different times for a while, and one's
	// leases on webhook deliveries would look ended to the other.
	code, body = post("POST", baseA+"/api/v1/subscriptions", appID,
		`{"customer":{"name":"Ana","taxID":"52998224725"},"value":990,"correlationID":"plan","dayGenerateCharge":5}`)
	is.Equal(code, http.StatusOK) // the subscription is created
	next, err := time.Parse(time.RFC3339, body["subscription"].(map[string]any)["nextChargeDate"].(string))
	is.NoErr(err)
	for range 2 {
		for _, base := range bases {
			waitDelivered()
			code, _ := post("POST", base+"/openpix/testing/clock", appID, `{"advance":"744h"}`)
			is.Equal(code, http.StatusOK) // the clock moved
		}
	}
	code, body = post("GET", baseA+"/openpix/testing/clock", appID, "")
	is.Equal(code, http.StatusOK)
	now, err := time.Parse(time.RFC3339Nano, body["now"].(string))
	is.NoErr(err)
	periods := 0
	for d := next; !d.After(now); d = d.AddDate(0, 1, 0) {
		periods++
	}

	report, err := svc.Audit(ctx)
	is.NoErr(err)
	is.True(report.OK()) // the ledger re-derives cleanly
	if !report.OK() {
		t.Log(report.Problems)
	}
	accounts, _, err := svc.ListAccounts(ctx, payments.ListParams{})
	is.NoErr(err)
	for _, a := range accounts {
		is.True(a.Balance.Available >= 0 && a.Balance.Total >= 0) // no account overdrawn
	}
	s1, err := svc.GetSubaccount(ctx, "s1@example.com")
	is.NoErr(err)
	s2, err := svc.GetSubaccount(ctx, "s2@example.com")
	is.NoErr(err)
	is.True(s1.Balance >= 0) // no subaccount overdrawn
	t.Logf("charges %d, refunds %d, transfers %d acknowledged; subscription periods %d", charges.len(), refunds.len(), transfers.len(), periods)
	is.True(transfers.len() > 0)                     // some transfers went through
	is.Equal(s2.Balance, int64(100*transfers.len())) // s2 only receives transfers: each correlationID once
	_, page, err := svc.ListRefunds(ctx, payments.ListParams{})
	is.NoErr(err)
	is.Equal(page.TotalCount, refunds.len()) // each refund correlationID once
	_, page, err = svc.ListCharges(ctx, payments.ChargeFilter{Subscription: "plan"})
	is.NoErr(err)
	is.True(periods >= 2)              // 62 days: at least two period starts
	is.Equal(page.TotalCount, periods) // each period generated once, by one of the two processes
	_, page, err = svc.ListCharges(ctx, payments.ChargeFilter{})
	is.NoErr(err)
	is.Equal(page.TotalCount, charges.len()+periods) // each charge correlationID once

	// Every event reached the receiver, once: the two processes did not both deliver it.
	delivered := waitDelivered()
	rcv.mu.Lock()
	dups := 0
	for _, n := range rcv.seen {
		dups += n - 1
	}
	rcv.mu.Unlock()
	t.Logf("events delivered %d, duplicates %d", delivered, dups)
	is.Equal(dups, 0) // each event delivered by one process
}

// TestCLI_BadPostgresURL: a -db PostgreSQL URL without a host or a database is a usage
// error naming -db, before anything is opened.
func TestCLI_BadPostgresURL(t *testing.T) {
	t.Parallel()
	for _, db := range []string{"postgres://", "postgres:///payments", "postgres://127.0.0.1:5432", "postgresql://127.0.0.1/", "postgres://%zz/x"} {
		t.Run(db, func(t *testing.T) {
			is := is.New(t)
			var stdout, stderr lockedBuffer
			code := cli(context.Background(), []string{"-addr", "127.0.0.1:0", "-db", db}, &stdout, &stderr)
			is.Equal(code, 2)                                 // a usage error
			is.True(strings.Contains(stderr.String(), "-db")) // naming the flag
			is.Equal(stdout.String(), "")
		})
	}
}
