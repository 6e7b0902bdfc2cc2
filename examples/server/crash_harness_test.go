package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/postgres/pgtest"
)

// The crash harness (TestCrash_Harness) runs the server binary on one bbolt file (and
// TestCrash_HarnessPostgres on one PostgreSQL schema) through
// many cycles of: concurrent money movements from several clients (charges created and
// paid through the sandbox, refunds, outgoing payments created and approved, transfers
// between accounts, subaccount credits and transfers between subaccounts), SIGKILL after a
// random number of acknowledged operations, and checks. One request in five is sent twice
// at once (a client retrying before the first answer). Set the cycle count with
// PAYMENTS_CRASH_CYCLES (default crashCyclesDefault, so that go test stays fast) and the
// seed with PAYMENTS_CRASH_SEED (default: the time; the test logs it, and a failure
// reproduces with it, up to the scheduling of the concurrent clients).
//
// What it checks, after each kill:
//   - the ledger audits clean (Service.Audit on the file, opened in the test);
//   - every operation a client saw answered 2xx is there, in at least the state the answer
//     said (a charge paid, a payment approved);
//   - then, after the clients retried every request the kill left unanswered (same body,
//     same correlationID) and the truth of each was read back: each correlationID is one
//     record (the list counts equal the known sets), each paid charge has one transaction
//     (one endToEndId), and the accounts' available balances equal what the known
//     operations add up to: a retried operation took effect once.
//
// At the end it settles every outgoing order (the sandbox clock passes their lease), checks
// every committed change has its events, and lets the server deliver: every event a
// webhook subscribes to reaches the receiver at least once, although the receiver failed
// one delivery in crashReceiverFailEvery during the cycles.
const (
	crashCyclesDefault = 3
	crashClients       = 4
	crashMaxAcks       = 40                        // a kill comes after 1 to crashMaxAcks acknowledged operations
	caixaKey           = "caixa@crash.example.com" // the second account
	sub1Key            = "sub1@crash.example.com"  // the subaccounts
	sub2Key            = "sub2@crash.example.com"
	paymentKey         = "ana@example.com"
)

// tri is what the client knows of an operation: not done, done, or unknown (the kill cut
// the request off, or it was refused for a reason a retry must clear up).
type tri int8

const (
	no tri = iota
	yes
	unknown
)

// Operations the clients make, by correlationID.
type (
	crashCharge struct {
		value         int64
		created, paid tri
		refunded      bool // a refund was asked for it
	}
	crashRefund struct {
		charge string
		value  int64
		done   tri
	}
	crashPayment struct {
		value             int64
		created, approved tri
	}
	// crashTransfer is a move between the company's books: a transfer between accounts,
	// a credit of a subaccount from the default account, or a transfer between
	// subaccounts. from and to are Pix keys ("" for the default account).
	crashTransfer struct {
		path, body string
		from, to   string
		value      int64
		done       tri
	}
)

// crashRun is the harness's state: the server process and what the clients know.
type crashRun struct {
	t       *testing.T
	bin, db string
	base    string
	appID   string
	proc    *exec.Cmd

	mu        sync.Mutex
	charges   map[string]*crashCharge
	refunds   map[string]*crashRefund
	payments  map[string]*crashPayment
	transfers map[string]*crashTransfer
	acked     []string // "<kind> <correlationID>" acknowledged since the last check
	acks      atomic.Int64
	retried   atomic.Int64 // operations retried after a kill (or a refusal)

	defaultKey string
	webhooks   map[string]string // event name -> webhook id
	rcv        *crashReceiver
}

func TestCrash_Harness(t *testing.T) {
	// Not parallel: the harness times kills against a loaded server, and CI validated it
	// running alone.
	if testing.Short() {
		t.Skip("runs and kills a server process")
	}
	bin, db := buildServer(t)
	runCrashHarness(t, bin, db, envInt(t, "PAYMENTS_CRASH_CYCLES", crashCyclesDefault))
}

// TestCrash_HarnessPostgres is the crash harness with the server on PostgreSQL (a schema of
// its own on the server of PAYMENTS_POSTGRES_URL; skipped without it), for
// PAYMENTS_CRASH_CYCLES_POSTGRES cycles. The kill there ends the process and its
// connections, and PostgreSQL rolls back what they had not committed: it checks the
// store's side of the promise, that what the server acknowledged had committed and that a
// retry finds what the first attempt committed. A delivery the kill cut off stays leased
// to the dead process (payments.Options.WebhookLease, about the -webhook-timeout on a
// shared store) until the clock passes the lease, as checkDelivered moves it.
func TestCrash_HarnessPostgres(t *testing.T) {
	// Not parallel: the harness times kills against a loaded server, and CI validated it
	// running alone.
	if testing.Short() {
		t.Skip("runs and kills a server process")
	}
	db := pgtest.URL(t)
	bin, _ := buildServer(t)
	runCrashHarness(t, bin, db, envInt(t, "PAYMENTS_CRASH_CYCLES_POSTGRES", crashCyclesDefault))
}

// runCrashHarness runs the harness's cycles with the server binary bin on db (a bbolt
// file or a PostgreSQL URL).
func runCrashHarness(t *testing.T, bin, db string, cycles int) {
	seed := uint64(envInt(t, "PAYMENTS_CRASH_SEED", int(time.Now().UnixNano()%1e9)))
	t.Logf("crash harness: %d cycles, PAYMENTS_CRASH_SEED=%d", cycles, seed)
	start := time.Now()

	h := &crashRun{t: t, bin: bin, db: db, charges: map[string]*crashCharge{}, refunds: map[string]*crashRefund{},
		payments: map[string]*crashPayment{}, transfers: map[string]*crashTransfer{}, rcv: newCrashReceiver(t)}
	h.base, h.appID, h.proc = startProcess(t, bin, db, true)
	h.setUp()
	h.rcv.failing.Store(true)
	rng := rand.New(rand.NewPCG(seed, 0))
	var loadTime, checkTime time.Duration // the load up to the kill; audit, restart and checks
	for cycle := range cycles {
		t0 := time.Now()
		h.load(cycle, seed, 1+rng.IntN(crashMaxAcks))
		t1 := time.Now()
		h.audit(fmt.Sprintf("after kill %d", cycle+1))
		h.base, _, h.proc = startProcess(t, bin, db, false)
		h.checkAcked()
		h.resolve()
		h.checkBalances()
		loadTime, checkTime = loadTime+t1.Sub(t0), checkTime+time.Since(t1)
		if t.Failed() {
			t.Fatalf("cycle %d failed (PAYMENTS_CRASH_SEED=%d)", cycle+1, seed)
		}
	}
	t2 := time.Now()
	h.rcv.failing.Store(false)
	h.settle()
	h.checkDelivered()
	t.Logf("crash harness: %d cycles in %v (load %v, audit+restart+checks %v, settling and delivery %v): %d charges, %d refunds, %d payments, %d moves; %d requests retried",
		cycles, time.Since(start).Round(time.Millisecond), loadTime.Round(time.Millisecond), checkTime.Round(time.Millisecond),
		time.Since(t2).Round(time.Millisecond), len(h.charges), len(h.refunds), len(h.payments), len(h.transfers), h.retried.Load())
}

// envInt reads an integer setting from the environment, def when unset.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a non-negative integer", name, v)
	}
	return n
}

// setUp makes the second account and the two subaccounts moves go between, and a webhook
// for every event of the catalogue, to the test's receiver.
func (h *crashRun) setUp() {
	t := h.t
	for _, c := range [][2]string{{"/api/v1/account", caixaKey}, {"/api/v1/subaccount", sub1Key}, {"/api/v1/subaccount", sub2Key}} {
		if code, body := h.do("POST", c[0], `{"pixKey":"`+c[1]+`","name":"crash"}`); code != http.StatusOK {
			t.Fatalf("creating %s: %d %v", c[1], code, body)
		}
	}
	for _, a := range h.accounts() {
		if a.IsDefault {
			h.defaultKey = a.PixKey
		}
	}
	code, body := h.do("GET", "/api/v1/webhook/events", "")
	if code != http.StatusOK {
		t.Fatalf("the event catalogue: %d %v", code, body)
	}
	h.webhooks = map[string]string{}
	for _, e := range body["events"].([]any) {
		name := e.(map[string]any)["name"].(string)
		code, body := h.do("POST", "/api/v1/webhook", `{"webhook":{"name":"crash","url":"`+h.rcv.srv.URL+`","event":"`+name+`","isActive":true}}`)
		if code != http.StatusOK {
			t.Fatalf("webhook for %s: %d %v", name, code, body)
		}
		h.webhooks[name] = body["webhook"].(map[string]any)["id"].(string)
	}
}

// do makes a request to the running server and decodes its JSON reply; status 0 when no
// reply came (the server died under it).
func (h *crashRun) do(method, path, body string) (int, map[string]any) {
	return crashDo(h.base, h.appID, method, path, body)
}

func crashDo(base, appID, method, path, body string) (int, map[string]any) {
	return crashDoWith(client, base, appID, method, path, body)
}

// clockClient waits for the answer of a clock move, which runs the due pass first: after
// many cycles, every order to settle and every webhook delivery that fell due.
var clockClient = &http.Client{Timeout: 5 * time.Minute}

// moveClock moves the sandbox clock forward by d ("10m").
func (h *crashRun) moveClock(d string) {
	if code, body := crashDoWith(clockClient, h.base, h.appID, "POST", "/openpix/testing/clock", `{"advance":"`+d+`"}`); code != http.StatusOK {
		h.t.Fatalf("moving the clock %s: %d %v", d, code, body)
	}
}

func crashDoWith(client *http.Client, base, appID, method, path, body string) (int, map[string]any) {
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		return 0, nil
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", appID)
	res, err := client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return 0, nil // cut off mid-reply: no answer
	}
	return res.StatusCode, out
}

// load runs the clients until killAt operations were acknowledged, kills the server with
// SIGKILL, and waits for the clients to stop.
func (h *crashRun) load(cycle int, seed uint64, killAt int) {
	h.acks.Store(0)
	kill := make(chan struct{})
	var once sync.Once
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range crashClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := crashClient{h: h, base: h.base, rng: rand.New(rand.NewPCG(seed, uint64(cycle*crashClients+c+1))),
				prefix: fmt.Sprintf("%d-%d", cycle, c), onAck: func() {
					if h.acks.Add(1) == int64(killAt) {
						once.Do(func() { close(kill) })
					}
				}}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				cl.step(i)
			}
		}()
	}
	select {
	case <-kill:
	case <-time.After(time.Minute):
		h.t.Fatal("the clients got no acknowledgements for a minute")
	}
	close(stop) // no new operations; those under way meet the kill
	if err := h.proc.Process.Signal(syscall.SIGKILL); err != nil {
		h.t.Fatal(err)
	}
	h.proc.Wait()
	wg.Wait()
}

// crashClient is one client of the load: its own random source and correlationIDs.
type crashClient struct {
	h      *crashRun
	base   string
	rng    *rand.Rand
	prefix string
	onAck  func()
	paid   []string // its charges paid, not yet refunded
}

// send makes a request, twice at once now and then (a client retrying before the first
// answer), and reports whether either answer was a 2xx.
func (c *crashClient) send(method, path, body string) bool {
	if c.rng.IntN(5) > 0 {
		code, _ := crashDo(c.base, c.h.appID, method, path, body)
		return code/100 == 2
	}
	var ok atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, _ := crashDo(c.base, c.h.appID, method, path, body); code/100 == 2 {
				ok.Store(true)
			}
		}()
	}
	wg.Wait()
	return ok.Load()
}

// outcome is what an answer tells the client: done, or unknown until checked.
func outcome(ok bool) tri {
	if ok {
		return yes
	}
	return unknown
}

// record sets what the client knows under the lock, noting an acknowledgement.
func (c *crashClient) record(ok bool, kind, corr string, set func()) {
	h := c.h
	h.mu.Lock()
	set()
	if ok {
		h.acked = append(h.acked, kind+" "+corr)
	}
	h.mu.Unlock()
	if ok {
		c.onAck()
	}
}

// step makes one operation: a charge (paid most of the time), a refund of a paid charge,
// an outgoing payment (created, then approved), or a move (see move).
func (c *crashClient) step(i int) {
	h := c.h
	corr := fmt.Sprintf("%s-%d", c.prefix, i)
	switch n := c.rng.IntN(12); {
	case n < 5 || (n < 7 && len(c.paid) == 0):
		ch := &crashCharge{value: int64(100 + c.rng.IntN(5000)), created: unknown}
		h.mu.Lock()
		h.charges["ch-"+corr] = ch
		h.mu.Unlock()
		ok := c.send("POST", "/api/v1/charge", chargeBody("ch-"+corr, ch.value))
		c.record(ok, "charge", "ch-"+corr, func() { ch.created = outcome(ok) })
		if !ok || c.rng.IntN(10) < 2 {
			return
		}
		c.record(false, "", "", func() { ch.paid = unknown })
		ok = c.send("GET", "/openpix/testing?transactionID=ch-"+corr, "")
		c.record(ok, "paid", "ch-"+corr, func() { ch.paid = outcome(ok) })
		if ok {
			c.paid = append(c.paid, "ch-"+corr)
		}
	case n < 7:
		charge := c.paid[0]
		c.paid = c.paid[1:]
		h.mu.Lock()
		ch := h.charges[charge]
		ch.refunded = true
		rf := &crashRefund{charge: charge, value: max(1, ch.value/2), done: unknown}
		if rf.value == payments.SandboxValueNotEnoughBalance {
			rf.value++ // the sandbox bank refuses this value: not a case of this harness
		}
		h.refunds["rf-"+corr] = rf
		h.mu.Unlock()
		ok := c.send("POST", "/api/v1/charge/"+charge+"/refund", refundBody("rf-"+corr, rf.value))
		c.record(ok, "refund", "rf-"+corr, func() { rf.done = outcome(ok) })
	case n < 9:
		p := &crashPayment{value: int64(1 + c.rng.IntN(300)), created: unknown} // under the sandbox's failing 666
		h.mu.Lock()
		h.payments["pay-"+corr] = p
		h.mu.Unlock()
		ok := c.send("POST", "/api/v1/payment", paymentBody("pay-"+corr, p.value))
		c.record(ok, "payment", "pay-"+corr, func() { p.created = outcome(ok) })
		if !ok {
			return
		}
		c.record(false, "", "", func() { p.approved = unknown })
		ok = c.send("POST", "/api/v1/payment/approve", `{"correlationID":"pay-`+corr+`"}`)
		c.record(ok, "approved", "pay-"+corr, func() { p.approved = outcome(ok) })
	default:
		tr := c.move(n, "tr-"+corr, int64(1+c.rng.IntN(200)))
		h.mu.Lock()
		h.transfers["tr-"+corr] = tr
		h.mu.Unlock()
		ok := c.send("POST", tr.path, tr.body)
		c.record(ok, "transfer", "tr-"+corr, func() { tr.done = outcome(ok) })
	}
}

func chargeBody(corr string, value int64) string {
	return fmt.Sprintf(`{"correlationID":%q,"value":%d}`, corr, value)
}

func refundBody(corr string, value int64) string {
	return fmt.Sprintf(`{"correlationID":%q,"value":%d}`, corr, value)
}

func paymentBody(corr string, value int64) string {
	return fmt.Sprintf(`{"value":%d,"destinationAlias":%q,"destinationAliasType":"EMAIL","correlationID":%q}`, value, paymentKey, corr)
}

// move is a move of value between the company's books, by n: to the second account, from
// the default account to a subaccount, or between the subaccounts.
func (c *crashClient) move(n int, corr string, value int64) *crashTransfer {
	tr := &crashTransfer{value: value, done: unknown}
	switch n {
	case 9:
		tr.path, tr.to = "/api/v1/transfer", caixaKey
		tr.body = fmt.Sprintf(`{"value":%d,"fromPixKey":%q,"toPixKey":%q,"correlationID":%q}`, value, c.h.defaultKey, caixaKey, corr)
	case 10:
		tr.path, tr.to = "/api/v1/subaccount/"+sub1Key+"/credit", sub1Key
		tr.body = fmt.Sprintf(`{"value":%d,"description":"crash","correlationID":%q}`, value, corr)
	default:
		tr.from, tr.to = sub1Key, sub2Key
		tr.path = "/api/v1/subaccount/transfer"
		tr.body = fmt.Sprintf(`{"value":%d,"fromPixKey":%q,"toPixKey":%q,"correlationID":%q}`, value, sub1Key, sub2Key, corr)
	}
	return tr
}
