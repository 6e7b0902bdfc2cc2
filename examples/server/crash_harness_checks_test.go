package main

// The checks of the crash harness (crash_harness_test.go): after each kill, and at the end.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/postgres"
)

// open opens the harness's database as a Service of the default company, as a process of
// its own would (the server is down): the bbolt file, or the PostgreSQL schema.
func (h *crashRun) open() (*payments.Service, func(), error) {
	if !isPostgres(h.db) {
		svc, err := payments.Open(h.db, payments.Options{})
		if err != nil {
			return nil, nil, err
		}
		return svc, func() { svc.Close() }, nil
	}
	st, err := postgres.Open(context.Background(), h.db)
	if err != nil {
		return nil, nil, err
	}
	svc, err := payments.New(st, payments.Options{})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return svc, func() { st.Close() }, nil
}

// audit opens the database (the server is down) and checks the ledger.
func (h *crashRun) audit(when string) {
	t := h.t
	svc, closeDB, err := h.open()
	if err != nil {
		t.Fatalf("%s: opening the database: %v", when, err)
	}
	defer closeDB()
	rep, err := svc.Audit(context.Background())
	if err != nil {
		t.Fatalf("%s: audit: %v", when, err)
	}
	if !rep.OK() {
		t.Errorf("%s: the ledger does not audit clean: %v", when, rep.Problems)
	}
}

// checkAcked reads back every operation acknowledged since the last check, before any
// retry: each is there, in at least the state its answer said.
func (h *crashRun) checkAcked() {
	t := h.t
	for _, a := range h.acked {
		kind, corr, _ := strings.Cut(a, " ")
		switch kind {
		case "charge", "paid":
			code, body := h.do("GET", "/api/v1/charge/"+corr, "")
			st := str(body, "charge", "status")
			if code != http.StatusOK || (kind == "paid" && st != "COMPLETED") || (st != "ACTIVE" && st != "COMPLETED") {
				t.Errorf("%s %s acknowledged, after the crash: %d %v", kind, corr, code, body)
			}
		case "refund":
			if code, body := h.do("GET", "/api/v1/refund/"+corr, ""); code != http.StatusOK {
				t.Errorf("refund %s acknowledged, after the crash: %d %v", corr, code, body)
			}
		case "payment", "approved":
			code, body := h.do("GET", "/api/v1/payment/"+corr, "")
			st := str(body, "payment", "status")
			if code != http.StatusOK || (kind == "approved" && st != "APPROVED" && st != "CONFIRMED") {
				t.Errorf("%s %s acknowledged, after the crash: %d %v", kind, corr, code, body)
			}
		}
	}
	h.acked = nil
}

// str walks a decoded body to a string ("" when absent).
func str(v any, path ...string) string {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// resolve retries every request the kill left unanswered, as a client would (the same
// body and correlationID), then reads back what is true. The operations are independent,
// so they are retried at once (charges first: a refund's charge must be known); the server
// commits them together.
func (h *crashRun) resolve() {
	t := h.t
	answered := func(code int, what string, body map[string]any) {
		h.retried.Add(1)
		if code == 0 || code >= 500 {
			t.Errorf("retrying %s: %d %v", what, code, body)
		}
	}
	var wg sync.WaitGroup
	for corr, ch := range h.charges {
		if ch.created == unknown || ch.paid == unknown {
			wg.Go(func() { h.resolveCharge(corr, ch, answered) })
		}
	}
	wg.Wait()
	for corr, rf := range h.refunds {
		if rf.done == unknown {
			wg.Go(func() {
				code, body := h.do("POST", "/api/v1/charge/"+rf.charge+"/refund", refundBody(corr, rf.value))
				answered(code, "refund "+corr, body)
				code, _ = h.do("GET", "/api/v1/refund/"+corr, "")
				rf.done = map[bool]tri{true: yes, false: no}[code == http.StatusOK]
			})
		}
	}
	for corr, p := range h.payments {
		if p.created == unknown || p.approved == unknown {
			wg.Go(func() { h.resolvePayment(corr, p, answered) })
		}
	}
	for corr, tr := range h.transfers {
		if tr.done == unknown {
			wg.Go(func() {
				code, body := h.do("POST", tr.path, tr.body)
				answered(code, "transfer "+corr, body)
				tr.done = map[bool]tri{true: yes, false: no}[code == http.StatusOK]
			})
		}
	}
	wg.Wait()
}

// resolveCharge retries a charge's creation and payment when unanswered, then reads its
// status.
func (h *crashRun) resolveCharge(corr string, ch *crashCharge, answered func(int, string, map[string]any)) {
	if ch.created == unknown {
		code, body := h.do("POST", "/api/v1/charge", chargeBody(corr, ch.value))
		answered(code, "charge "+corr, body)
	}
	if ch.paid == unknown {
		code, body := h.do("GET", "/openpix/testing?transactionID="+corr, "")
		answered(code, "paying "+corr, body)
	}
	code, body := h.do("GET", "/api/v1/charge/"+corr, "")
	ch.created = map[bool]tri{true: yes, false: no}[code == http.StatusOK]
	ch.paid = map[bool]tri{true: yes, false: no}[str(body, "charge", "status") == "COMPLETED"]
}

// resolvePayment retries a payment's creation and approval when unanswered, then reads
// its status.
func (h *crashRun) resolvePayment(corr string, p *crashPayment, answered func(int, string, map[string]any)) {
	if p.created == unknown {
		code, body := h.do("POST", "/api/v1/payment", paymentBody(corr, p.value))
		answered(code, "payment "+corr, body)
	}
	code, body := h.do("GET", "/api/v1/payment/"+corr, "")
	p.created = map[bool]tri{true: yes, false: no}[code == http.StatusOK]
	if st := str(body, "payment", "status"); p.approved == unknown && st == "CREATED" {
		acode, abody := h.do("POST", "/api/v1/payment/approve", `{"correlationID":"`+corr+`"}`)
		answered(acode, "approving "+corr, abody)
		_, body = h.do("GET", "/api/v1/payment/"+corr, "")
	}
	st := str(body, "payment", "status")
	p.approved = map[bool]tri{true: yes, false: no}[st == "APPROVED" || st == "CONFIRMED"]
	if st == "FAILED" {
		h.t.Errorf("payment %s FAILED in the sandbox", corr)
	}
}

// account is an account as GET /account lists it.
type account struct {
	IsDefault bool   `json:"isDefault"`
	PixKey    string `json:"pixKey"`
	Balance   struct {
		Total, Blocked, Available int64
	} `json:"balance"`
}

func (h *crashRun) accounts() []account {
	code, body := h.do("GET", "/api/v1/account", "")
	if code != http.StatusOK {
		h.t.Fatalf("listing accounts: %d %v", code, body)
	}
	b, _ := json.Marshal(body["accounts"])
	var out []account
	if err := json.Unmarshal(b, &out); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// checkBalances checks, once every operation is known, that each correlationID is one
// record and the available balances of the accounts and subaccounts are what the
// operations add up to. A refund or a payment holds its money when it is created or
// approved, so the available balance does not depend on whether the bank has settled it.
func (h *crashRun) checkBalances() {
	t := h.t
	fees := payments.DefaultFeePolicy()
	books := map[string]int64{} // Pix key ("" for the default account) -> available balance
	var charges, paid, refunds, pays int
	for _, ch := range h.charges {
		if ch.created == yes {
			charges++
		}
		if ch.paid == yes {
			paid++
			books[""] += ch.value - fees.Fee(ch.value)
		}
	}
	for _, rf := range h.refunds {
		if rf.done == yes {
			refunds++
			books[""] -= rf.value
		}
	}
	for _, p := range h.payments {
		if p.created == yes {
			pays++
		}
		if p.approved == yes {
			books[""] -= p.value
		}
	}
	for _, tr := range h.transfers {
		if tr.done == yes {
			books[tr.from] -= tr.value
			books[tr.to] += tr.value
		}
	}
	got := map[string]int64{}
	for _, a := range h.accounts() {
		got[map[bool]string{true: "", false: a.PixKey}[a.IsDefault]] = a.Balance.Available
	}
	for _, key := range []string{sub1Key, sub2Key} {
		code, body := h.do("GET", "/api/v1/subaccount/"+key, "")
		n, ok := body["SubAccount"].(map[string]any)["balance"].(float64)
		if code != http.StatusOK || !ok {
			t.Fatalf("subaccount %s: %d %v", key, code, body)
		}
		got[key] = int64(n)
	}
	for _, key := range []string{"", caixaKey, sub1Key, sub2Key} {
		if got[key] != books[key] {
			t.Errorf("account %q: available %d, the known operations add up to %d", key, got[key], books[key])
		}
	}
	if t.Failed() {
		h.dump()
	}
	for _, c := range []struct {
		path string
		want int
	}{
		{"/api/v1/charge?limit=1", charges}, {"/api/v1/transaction?type=PAYMENT&limit=1", paid},
		{"/api/v1/transaction?type=REFUND&limit=1", refunds}, {"/api/v1/refund?limit=1", refunds}, {"/api/v1/payment?limit=1", pays},
	} {
		code, body := h.do("GET", c.path, "")
		n, _ := body["pageInfo"].(map[string]any)["totalCount"].(float64)
		if code != http.StatusOK || int(n) != c.want {
			t.Errorf("GET %s: %d records, want %d (each correlationID once)", c.path, int(n), c.want)
		}
	}
}

// settle moves the sandbox clock past the lease of every order the kills left unsettled
// (the move runs the due pass before it answers), then checks that every approved payment
// is CONFIRMED, every refund REFUNDED (the /refund routes' word), and no money is held.
func (h *crashRun) settle() {
	t := h.t
	h.moveClock("10m")
	for corr, p := range h.payments {
		if p.approved == yes {
			if _, body := h.do("GET", "/api/v1/payment/"+corr, ""); str(body, "payment", "status") != "CONFIRMED" {
				t.Errorf("payment %s not settled: %v", corr, body)
			}
		}
	}
	for corr, rf := range h.refunds {
		if rf.done == yes {
			if _, body := h.do("GET", "/api/v1/refund/"+corr, ""); str(body, "pixTransactionRefund", "status") != "REFUNDED" {
				t.Errorf("refund %s not settled: %v", corr, body)
			}
		}
	}
	for _, a := range h.accounts() {
		if a.Balance.Blocked != 0 {
			t.Errorf("account %s: %d still held after the orders settled", a.PixKey, a.Balance.Blocked)
		}
	}
}

// checkDelivered stops the server, checks on the database that every committed change has its
// events and the ledger audits clean, then starts the server again and waits until every
// such event has reached the receiver at least once (failing after a minute without
// progress).
func (h *crashRun) checkDelivered() {
	t := h.t
	if err := h.proc.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	h.proc.Wait()
	h.audit("at the end")
	want := h.checkEvents()
	h.base, _, h.proc = startProcess(t, h.bin, h.db, false)
	// A delivery a kill cut off is claimed until its lease ends (the clock of the process
	// that claimed it, moved by settle at most); moving the clock past it runs the due
	// pass, which retries it.
	h.moveClock("30m")
	// After many cycles the backlog takes a while: the deadline is a minute without any
	// new delivery.
	stall := time.NewTimer(time.Minute)
	defer stall.Stop()
	for last := len(want) + 1; ; {
		missing := h.rcv.missing(want)
		if missing == 0 {
			break
		}
		if missing < last {
			last = missing
			stall.Reset(time.Minute)
		}
		select {
		case <-h.rcv.arrived:
		case <-stall.C:
			h.explainMissing(want)
			t.Fatalf("%d of %d events never reached the webhook receiver (none for a minute)", missing, len(want))
		}
	}
	t.Logf("webhooks: %d events delivered, %d POSTs received, %d of them answered 503", len(want), h.rcv.posts.Load(), h.rcv.failed.Load())
	if err := h.proc.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	h.proc.Wait()
}

// explainMissing logs, for a failed delivery check, the first events of want the
// receiver never saw, with the attempts the database holds for each (the server is
// stopped to read them), and keeps a copy of a bbolt file for a closer look.
func (h *crashRun) explainMissing(want []string) {
	t := h.t
	h.proc.Process.Signal(syscall.SIGTERM)
	h.proc.Wait()
	if !isPostgres(h.db) {
		keep := filepath.Join(os.TempDir(), fmt.Sprintf("crash-failed-%d.db", time.Now().UnixNano()))
		if b, err := os.ReadFile(h.db); err == nil && os.WriteFile(keep, b, 0o600) == nil {
			t.Logf("the database is kept in %s", keep)
		}
	}
	svc, closeDB, err := h.open()
	if err != nil {
		t.Logf("opening the database: %v", err)
		return
	}
	defer closeDB()
	h.rcv.mu.Lock()
	defer h.rcv.mu.Unlock()
	shown := 0
	for _, id := range want {
		if h.rcv.seen[id] || shown == 10 {
			continue
		}
		shown++
		rest := strings.TrimPrefix(id, "msg_")
		i := strings.LastIndexByte(rest, '_')
		seq, _ := strconv.ParseUint(rest[i+1:], 10, 64)
		w, _ := svc.GetWebhook(context.Background(), rest[:i])
		as, _, err := svc.ListEventWebhookAttempts(context.Background(), seq, rest[:i], payments.ListParams{})
		t.Logf("never received: %s (webhook %s, event %s, active %v): attempts %+v (err %v)", id, rest[:i], w.Event, w.IsActive, as, err)
	}
}

// checkEvents reads every event from the database and checks each committed operation has
// its events; it returns the webhook-ids the receiver must see: one per event of a name a
// webhook is registered for.
func (h *crashRun) checkEvents() []string {
	t := h.t
	svc, closeDB, err := h.open()
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	byName := map[string]map[string]bool{} // event name -> every JSON string in its payloads, quoted
	var want []string
	for after := uint64(0); ; {
		evs, err := svc.Events(context.Background(), after, payments.MaxLimit)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			if byName[ev.Name] == nil {
				byName[ev.Name] = map[string]bool{}
			}
			for _, q := range jsonStrings.FindAllString(string(ev.Data), -1) {
				byName[ev.Name][q] = true
			}
			if id, ok := h.webhooks[ev.Name]; ok {
				want = append(want, "msg_"+id+"_"+strconv.FormatUint(ev.Seq, 10))
			}
			after = ev.Seq
		}
	}
	has := func(name, corr string) {
		if !byName[svc.EventName(name)][`"`+corr+`"`] {
			t.Errorf("no %s event for %s", name, corr)
		}
	}
	for corr, ch := range h.charges {
		if ch.created == yes {
			has(payments.EventChargeCreated, corr)
		}
		if ch.paid == yes {
			has(payments.EventChargeCompleted, corr)
			has(payments.EventTransactionReceived, corr)
		}
	}
	for corr, rf := range h.refunds {
		if rf.done == yes {
			has(payments.EventRefundConfirmed, corr)
		}
	}
	for corr, p := range h.payments {
		if p.approved == yes {
			has(payments.EventMovementConfirmed, corr)
		}
	}
	return want
}

// crashReceiver is the webhook receiver: it records each webhook-id it answers 200. While
// failing is set (during the cycles), it answers every crashReceiverFailEvery-th delivery
// 503 instead, so that kills also meet deliveries the server owes again later.
type crashReceiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	seen    map[string]bool
	posts   atomic.Int64
	failing atomic.Bool
	failed  atomic.Int64
	arrived chan struct{} // a token after each delivery
}

const crashReceiverFailEvery = 8

func newCrashReceiver(t *testing.T) *crashReceiver {
	r := &crashReceiver{seen: map[string]bool{}, arrived: make(chan struct{}, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var v struct{ Evento string }
		_ = json.Unmarshal(b, &v)
		if v.Evento == "teste_webhook" {
			return // the test call on create
		}
		if n := r.posts.Add(1); r.failing.Load() && n%crashReceiverFailEvery == 0 {
			r.failed.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		r.mu.Lock()
		r.seen[req.Header.Get("webhook-id")] = true
		r.mu.Unlock()
		select {
		case r.arrived <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// missing counts the webhook-ids of want not received yet.
func (r *crashReceiver) missing(want []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, id := range want {
		if !r.seen[id] {
			n++
		}
	}
	return n
}

// dump logs what the clients know, for a failure.
func (h *crashRun) dump() {
	for corr, ch := range h.charges {
		h.t.Logf("charge %s %+v", corr, *ch)
	}
	for corr, rf := range h.refunds {
		h.t.Logf("refund %s %+v", corr, *rf)
	}
	for corr, p := range h.payments {
		h.t.Logf("payment %s %+v", corr, *p)
	}
	for corr, tr := range h.transfers {
		h.t.Logf("transfer %s %+v", corr, *tr)
	}
}

// jsonStrings matches the string literals of a JSON text, quotes included: checkEvents
// looks a correlationID up among them (a search of every payload for every id took the
// square of the run's length, minutes at 1,500 cycles).
var jsonStrings = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
