package payments_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/store/memory"
	"github.com/pixfoundry/payments/store/storetest"
)

// faultStep is one operation of a scenario. run returns an error; ok says whether an error
// seen on a retry (attempt > 0, after a fault) means the operation took effect earlier.
type faultStep struct {
	name string
	run  func(f *faultFixture) error
	// retryDone are the error codes that, on a retry, say the first attempt took effect.
	retryDone []payments.Code
}

type faultFixture struct {
	t     *testing.T
	svc   *payments.Service
	clock *payments.ManualClock
	fs    *storetest.FaultStore
	acct  string
	vars  map[string]string
}

func newFaultFixture(t *testing.T, rail payments.Rail) *faultFixture {
	t.Helper()
	fs := storetest.Faults(memory.New())
	clock := payments.NewManualClock(t0)
	if rail == nil {
		rail = payments.NewSandboxRail(clock, 0)
	}
	svc, err := payments.New(fs, payments.Options{Clock: clock, Rail: rail, SendTimeout: 5 * time.Second,
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja Exemplo", PixKey: "pix@loja.example.com", MerchantName: "Loja Exemplo", MerchantCity: "Sao Paulo"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	acct, err := svc.DefaultAccount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.FundAccountForTest(ctx, acct.AccountID, 100_000); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"s0@example.com", "s1@example.com"} {
		if _, _, err := svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: k, Name: "Sub " + k}); err != nil {
			t.Fatal(err)
		}
		if err := svc.FundSubaccountForTest(ctx, k, 5000); err != nil {
			t.Fatal(err)
		}
	}
	return &faultFixture{t: t, svc: svc, clock: clock, fs: fs, acct: acct.AccountID, vars: map[string]string{}}
}

// faultSummary is what a scenario left, independent of generated ids.
func faultSummary(t *testing.T, svc *payments.Service) string {
	t.Helper()
	var b strings.Builder
	rep, err := svc.Audit(ctx)
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	if !rep.OK() {
		fmt.Fprintf(&b, "AUDIT PROBLEMS: %v\n", rep.Problems)
	}
	fmt.Fprintf(&b, "entries %d books %d\n", rep.Entries, rep.Books)
	accts, _, err := svc.ListAccounts(ctx, payments.ListParams{Limit: payments.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range accts {
		fmt.Fprintf(&b, "account default=%v %+v\n", a.IsDefault, a.Balance)
	}
	subs, _, err := svc.ListSubaccounts(ctx, payments.ListParams{Limit: payments.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subs {
		fmt.Fprintf(&b, "subaccount %s %d\n", s.PixKey, s.Balance)
	}
	count := map[string]int{}
	var after uint64
	for {
		evs, err := svc.Events(ctx, after, payments.MaxLimit)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			count["event "+e.Name]++
			after = e.Seq
		}
		if len(evs) < payments.MaxLimit {
			break
		}
	}
	cs, _, err := svc.ListCharges(ctx, payments.ChargeFilter{ListParams: payments.ListParams{Limit: payments.MaxLimit}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		count[fmt.Sprintf("charge %s %s paid=%d", c.CorrelationID, c.Status, c.PaidValue)]++
	}
	xs, _, err := svc.ListTransactions(ctx, payments.TransactionFilter{ListParams: payments.ListParams{Limit: payments.MaxLimit}})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range xs {
		count[fmt.Sprintf("transaction %s %s %d", x.Type, x.Status, x.Value)]++
	}
	rs, _, err := svc.ListRefunds(ctx, payments.ListParams{Limit: payments.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		corr := r.CorrelationID
		if strings.HasPrefix(corr, "cashback-") {
			corr = "cashback-*"
		}
		count[fmt.Sprintf("refund %s %s %d", corr, r.Status, r.Value)]++
	}
	ps, _, err := svc.ListPayments(ctx, payments.PaymentFilter{ListParams: payments.ListParams{Limit: payments.MaxLimit}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		count[fmt.Sprintf("payment %s %s %d", p.CorrelationID, p.Status, p.Value)]++
	}
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s x%d\n", k, count[k])
	}
	return b.String()
}

// runFaultScenario runs the steps on a fresh fixture with the fault armed for the steps
// only; each step is retried (up to 3 times) while it fails; then the fault is disarmed,
// the due pass run, and the summary returned. It returns also the Tx calls, Updates and
// Views the armed part made, and whether the fault fired.
func runFaultScenario(t *testing.T, steps []faultStep, failAt, commitFailAt, viewFailAt int) (sum string, calls, updates, views int, fired bool, where string) {
	return runFaultScenarioRnd(t, steps, failAt, commitFailAt, viewFailAt, nil)
}

func runFaultScenarioRnd(t *testing.T, steps []faultStep, failAt, commitFailAt, viewFailAt int, rnd func(string) bool) (sum string, calls, updates, views int, fired bool, where string) {
	t.Helper()
	f := newFaultFixture(t, nil)
	f.fs.Arm(failAt, commitFailAt, viewFailAt)
	f.fs.SetRandom(rnd)
	tries := 3
	if rnd != nil {
		tries = 50
	}
	for _, st := range steps {
		var err error
		for attempt := 0; attempt < tries; attempt++ {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("step %s panicked: %v", st.name, r)
					}
				}()
				err = st.run(f)
			}()
			if err == nil {
				break
			}
			if attempt > 0 && containsCode(st.retryDone, payments.ErrorCode(err)) {
				err = nil
				break
			}
			code := payments.ErrorCode(err)
			if code != payments.EINTERNAL && code != payments.EUNAVAILABLE {
				t.Errorf("fault %d/%d/%d: step %s (attempt %d): an injected store fault answered %s: %v", failAt, commitFailAt, viewFailAt, st.name, attempt, code, err)
			}
		}
		if err != nil {
			t.Fatalf("step %s never succeeded: %v", st.name, err)
		}
	}
	calls, updates, views, fired, where = f.fs.Disarm()
	f.clock.Advance(time.Hour) // past every order's lease and backoff
	if err := f.svc.RunDue(ctx); err != nil {
		t.Fatalf("run due: %v", err)
	}
	return faultSummary(t, f.svc), calls, updates, views, fired, where
}

func containsCode(codes []payments.Code, c payments.Code) bool {
	for _, x := range codes {
		if x == c {
			return true
		}
	}
	return false
}

// faultMoneySteps drives most money operations once each.
func faultMoneySteps() []faultStep {
	cust := payments.CreateCustomerParams{Name: "Ana", TaxID: "52998224725", Email: "ana@example.com"}
	return []faultStep{
		{name: "cashback promise", run: func(f *faultFixture) error {
			_, _, err := f.svc.GetOrCreateExclusiveCashback(ctx, "52998224725", 300)
			return err
		}},
		{name: "create charge", run: func(f *faultFixture) error {
			c := cust
			_, err := f.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: 10_000, Customer: &c,
				EnableCashbackExclusivePercentage: true, ReturnExisting: true})
			return err
		}},
		{name: "create split charge", run: func(f *faultFixture) error {
			_, err := f.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c2", Value: 2_000, ReturnExisting: true,
				EnableCashbackPercentage: true,
				Splits:                   []payments.Split{{PixKey: "s0@example.com", Value: 500}}})
			return err
		}},
		{name: "pay charge", run: func(f *faultFixture) error {
			c, err := f.svc.GetCharge(ctx, "c1")
			if err != nil {
				return err
			}
			_, err = f.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E1", Value: 10_000, TxID: c.TransactionID,
				Payer: &payments.Payer{Name: "Ana", TaxID: "52998224725"}})
			return err
		}},
		{name: "pay split charge", run: func(f *faultFixture) error {
			c, err := f.svc.GetCharge(ctx, "c2")
			if err != nil {
				return err
			}
			_, err = f.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E2", Value: 2_000, TxID: c.TransactionID})
			return err
		}},
		{name: "refund", run: func(f *faultFixture) error {
			_, err := f.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: "E1", CorrelationID: "r1", Value: 1_000})
			return err
		}},
		{name: "charge refund", run: func(f *faultFixture) error {
			_, err := f.svc.CreateChargeRefund(ctx, "c2", payments.CreateChargeRefundParams{CorrelationID: "r2", Value: 500})
			return err
		}},
		{name: "payment", retryDone: []payments.Code{payments.ECONFLICT}, run: func(f *faultFixture) error {
			_, err := f.svc.CreatePayment(ctx, payments.CreatePaymentParams{Value: 700, DestinationAlias: "dest@example.com",
				CorrelationID: "p1", AutoApprove: true})
			return err
		}},
		{name: "withdraw", run: func(f *faultFixture) error {
			_, err := f.svc.WithdrawFromAccount(ctx, f.acct, 2_000, payments.WithdrawOptions{CorrelationID: "w1"})
			return err
		}},
		{name: "sub withdraw", run: func(f *faultFixture) error {
			_, err := f.svc.WithdrawFromSubaccount(ctx, "s1@example.com", 1_000, payments.WithdrawOptions{CorrelationID: "w2"})
			return err
		}},
		{name: "sub transfer", run: func(f *faultFixture) error {
			_, err := f.svc.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{Value: 300, FromPixKey: "s0@example.com",
				ToPixKey: "s1@example.com", CorrelationID: "t1"})
			return err
		}},
		{name: "sub debit", run: func(f *faultFixture) error {
			_, err := f.svc.DebitSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "s0@example.com", Value: 100, Description: "d", CorrelationID: "m1"})
			return err
		}},
		{name: "sub credit", run: func(f *faultFixture) error {
			_, err := f.svc.CreditSubaccount(ctx, payments.SubaccountMoveParams{PixKey: "s1@example.com", Value: 200, Description: "c", CorrelationID: "m2"})
			return err
		}},
		{name: "create expiring charge", run: func(f *faultFixture) error {
			_, err := f.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c3", Value: 900, ExpiresIn: 900, ReturnExisting: true})
			return err
		}},
		{name: "subscription", retryDone: []payments.Code{payments.ECONFLICT}, run: func(f *faultFixture) error {
			c := cust
			_, err := f.svc.CreateSubscription(ctx, payments.CreateSubscriptionParams{CorrelationID: "sub1", Value: 990, Customer: &c})
			return err
		}},
		{name: "due pass a day later", run: func(f *faultFixture) error {
			if f.vars["moved"] == "" {
				f.clock.Advance(24 * time.Hour)
				f.vars["moved"] = "1"
			}
			return f.svc.RunDue(ctx)
		}},
	}
}

// TestFaults_EveryStoreCall fails each store call of a scenario in turn, then each
// Update's commit (committed, reported failed), then each View, and checks that after
// retries the outcome is the same as without a fault: the audit is clean, balances,
// statuses and events match.
func TestFaults_EveryStoreCall(t *testing.T) {
	t.Parallel()
	steps := faultMoneySteps()
	ref, calls, updates, views, _, _ := runFaultScenario(t, steps, 0, 0, 0)
	if strings.Contains(ref, "AUDIT PROBLEMS") {
		t.Fatalf("reference run: %s", ref)
	}
	t.Logf("reference: %d calls, %d updates, %d views\n%s", calls, updates, views, ref)
	check := func(name string, failAt, commitFailAt, viewFailAt int) {
		t.Run(name, func(t *testing.T) {
			got, _, _, _, fired, where := runFaultScenario(t, steps, failAt, commitFailAt, viewFailAt)
			if !fired {
				t.Skip("fault did not fire")
			}
			if got != ref {
				t.Errorf("fault at %s: outcome differs from the run without faults:\n%s", where, diffLines(ref, got))
			}
		})
	}
	for i := 1; i <= calls; i++ {
		check(fmt.Sprintf("call=%d", i), i, 0, 0)
	}
	for i := 1; i <= updates; i++ {
		check(fmt.Sprintf("commit=%d", i), 0, i, 0)
	}
	for i := 1; i <= views; i++ {
		check(fmt.Sprintf("view=%d", i), 0, 0, i)
	}
}

func diffLines(a, b string) string {
	as, bs := strings.Split(a, "\n"), strings.Split(b, "\n")
	in := func(xs []string, s string) bool {
		for _, x := range xs {
			if x == s {
				return true
			}
		}
		return false
	}
	var out strings.Builder
	for _, s := range as {
		if !in(bs, s) {
			fmt.Fprintf(&out, "- %s\n", s)
		}
	}
	for _, s := range bs {
		if !in(as, s) {
			fmt.Fprintf(&out, "+ %s\n", s)
		}
	}
	return out.String()
}

var _ = is.New

// faultSender answers every delivery 200 and counts the deliveries of events (not the
// test call on create).
type faultSender struct {
	mu     sync.Mutex
	events int
}

func (c *faultSender) SendWebhook(_ context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
	if !strings.Contains(string(r.Body), `"teste_webhook"`) {
		c.mu.Lock()
		c.events++
		c.mu.Unlock()
	}
	return payments.WebhookResponse{Status: 200}, nil
}

func (c *faultSender) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events
}

// failKeyReads makes the fault store fail every read of the webhook signing key.
func failKeyReads(fs *storetest.FaultStore, on bool) {
	if !on {
		fs.Disarm()
		fs.SetOnCall(nil)
		return
	}
	fs.SetOnCall(func(method string) error {
		if method == "Get webhook_keys" {
			return storetest.ErrInjected
		}
		return nil
	})
	fs.Arm(0, 0, 0)
}

// TestFaults_WebhookKeyStoreFaultIsNotAReceiverFailure: a store failure while loading the
// signing key (the first delivery of a process, e.g. after a restart) is not an attempt of
// the receiver, which was never called: recorded as one, it used up the event's attempts
// (here the only one) and the event was given up, though the receiver answered 200
// throughout. The event goes once the store answers.
func TestFaults_WebhookKeyStoreFaultIsNotAReceiverFailure(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	fs := storetest.Faults(memory.New())
	clock := payments.NewManualClock(t0)
	snd := &faultSender{}
	opts := payments.Options{Clock: clock, WebhookSender: snd, WebhookAttempts: 1,
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"}}
	first, err := payments.New(fs, opts)
	is.NoErr(err)
	w, err := first.CreateWebhook(ctx, payments.CreateWebhookParams{URL: "https://hooks.example.com/a"}) // TRANSACTION_RECEIVED
	is.NoErr(err)

	// a restarted process: same store, its signing key not loaded yet
	svc, err := payments.New(fs, opts)
	is.NoErr(err)
	_, err = svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E1", Value: 100})
	is.NoErr(err)

	failKeyReads(fs, true)
	err = svc.RunWebhooks(ctx) // the store fails while the key is read
	failKeyReads(fs, false)
	t.Logf("RunWebhooks with the key read failing: %v", err)
	is.Equal(snd.count(), 0) // the receiver was not called

	clock.Advance(time.Hour)
	is.NoErr(svc.RunWebhooks(ctx)) // the store is well again
	atts, _, err := svc.ListWebhookAttempts(ctx, w.ID, payments.ListParams{})
	is.NoErr(err)
	for _, a := range atts {
		t.Logf("attempt: outcome %s status %d error %q", a.Outcome, a.Status, a.Error)
	}
	is.Equal(snd.count(), 1) // the event reaches the receiver once the store answers
	for _, a := range atts {
		is.True(!strings.Contains(a.Error, "injected store fault")) // a store failure is not the receiver's attempt
	}
}

// TestFaults_CreateWebhookStoreFaultIsNot400: a store failure while loading the signing key
// for CreateWebhook's test call is the internal failure it is, not EINVALID on "url" (a
// 400 blaming the client's URL).
func TestFaults_CreateWebhookStoreFaultIsNot400(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	fs := storetest.Faults(memory.New())
	svc, err := payments.New(fs, payments.Options{Clock: payments.NewManualClock(t0), WebhookSender: &faultSender{},
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"}})
	is.NoErr(err)
	failKeyReads(fs, true)
	_, err = svc.CreateWebhook(ctx, payments.CreateWebhookParams{URL: "https://hooks.example.com/a"})
	failKeyReads(fs, false)
	t.Logf("CreateWebhook: %v", err)
	is.True(err != nil)
	is.Equal(payments.ErrorCode(err), payments.EINTERNAL) // the store failed, not the client's url
}

// faultSeeds is how many seeds the random fault tests run: PAYMENTS_FAULT_SEEDS, or 40.
func faultSeeds() uint64 {
	if n, err := strconv.ParseUint(os.Getenv("PAYMENTS_FAULT_SEEDS"), 10, 64); err == nil {
		return n
	}
	return 40
}

// TestFaults_RandomFaults fails store calls, commits and views at random through the
// scenario and compares the outcome, once the retries succeed and the due pass has run
// without faults, with the run without faults.
func TestFaults_RandomFaults(t *testing.T) {
	t.Parallel()
	steps := faultMoneySteps()
	ref, _, _, _, _, _ := runFaultScenario(t, steps, 0, 0, 0)
	seeds := faultSeeds()
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			var mu sync.Mutex
			rnd := func(what string) bool {
				mu.Lock()
				defer mu.Unlock()
				switch what {
				case "call":
					return rng.IntN(100) < 3
				default:
					return rng.IntN(100) < 10
				}
			}
			got, _, _, _, _, _ := runFaultScenarioRnd(t, steps, 0, 0, 0, rnd)
			if got != ref {
				t.Errorf("outcome differs from the run without faults:\n%s", diffLines(ref, got))
			}
		})
	}
}

// faultRail wraps the sandbox rail: fault decides, per call, to fail it (an error, a
// timeout, a PENDING answer, an unknown status) before the sandbox answers.
type faultRail struct {
	inner payments.Rail
	mu    sync.Mutex
	fault func(call string) string // "", "error", "timeout", "pending", "garbage"
	sends map[string]int
	ids   map[string]payments.PixOrder
}

func (r *faultRail) decide(call string, o payments.PixOrder) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sends == nil {
		r.sends, r.ids = map[string]int{}, map[string]payments.PixOrder{}
	}
	r.sends[o.ID]++
	if prev, ok := r.ids[o.ID]; ok && (prev.Value != o.Value || !prev.SentAt.Equal(o.SentAt) || prev.Kind != o.Kind) {
		panic(fmt.Sprintf("order %s sent as %+v, then as %+v", o.ID, prev, o))
	}
	r.ids[o.ID] = o
	if r.fault == nil {
		return ""
	}
	return r.fault(call)
}

func (r *faultRail) answer(ctx context.Context, call string, o payments.PixOrder, real func() (payments.Settlement, error)) (payments.Settlement, error) {
	switch r.decide(call, o) {
	case "error":
		return payments.Settlement{}, errors.New("bank unreachable")
	case "timeout":
		return payments.Settlement{}, context.DeadlineExceeded
	case "pending":
		return payments.Settlement{Status: payments.SettlementPending, At: o.SentAt}, nil
	case "garbage":
		return payments.Settlement{Status: "WHATEVER"}, nil
	case "late-error": // the bank took it, but the answer was lost
		real()
		return payments.Settlement{}, errors.New("answer lost")
	}
	return real()
}

func (r *faultRail) Send(ctx context.Context, o payments.PixOrder) (payments.Settlement, error) {
	return r.answer(ctx, "send", o, func() (payments.Settlement, error) { return r.inner.Send(ctx, o) })
}

func (r *faultRail) Status(ctx context.Context, o payments.PixOrder) (payments.Settlement, error) {
	return r.answer(ctx, "status", o, func() (payments.Settlement, error) { return r.inner.Status(ctx, o) })
}

func (r *faultRail) ResolveKey(ctx context.Context, key string, kt brcode.KeyType) (payments.KeyOwner, error) {
	return r.inner.ResolveKey(ctx, key, kt)
}

// TestFaults_RandomRailFaults makes the Rail fail at random (errors, timeouts, PENDING
// answers, an unknown status, answers lost after the bank acted) along with random store
// faults, and compares the outcome, once the clock has moved on and the due pass has run
// without faults, with the run without faults.
func TestFaults_RandomRailFaults(t *testing.T) {
	t.Parallel()
	steps := faultMoneySteps()
	ref, _, _, _, _, _ := runFaultScenario(t, steps, 0, 0, 0)
	seeds := faultSeeds()
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			var mu sync.Mutex
			on := true
			rail := &faultRail{}
			rail.fault = func(string) string {
				mu.Lock()
				defer mu.Unlock()
				if !on {
					return ""
				}
				kinds := []string{"", "", "", "error", "timeout", "pending", "garbage", "late-error"}
				return kinds[rng.IntN(len(kinds))]
			}
			rnd := func(what string) bool {
				mu.Lock()
				defer mu.Unlock()
				if what == "call" {
					return rng.IntN(100) < 2
				}
				return rng.IntN(100) < 5
			}
			f := newFaultFixture(t, rail)
			rail.inner = payments.NewSandboxRail(f.clock, 0)
			f.fs.Arm(0, 0, 0)
			f.fs.SetRandom(rnd)
			for _, st := range steps {
				var err error
				for attempt := 0; attempt < 50; attempt++ {
					if err = st.run(f); err == nil || attempt > 0 && containsCode(st.retryDone, payments.ErrorCode(err)) {
						err = nil
						break
					}
				}
				if err != nil {
					t.Fatalf("step %s never succeeded: %v", st.name, err)
				}
			}
			f.fs.Disarm()
			mu.Lock()
			on = false
			mu.Unlock()
			for range 3 {
				f.clock.Advance(time.Hour)
				if err := f.svc.RunDue(ctx); err != nil {
					t.Fatalf("run due: %v", err)
				}
			}
			// the reference moved an hour once: move it back to compare like with like
			got := faultSummary(t, f.svc)
			if got != ref {
				t.Errorf("outcome differs from the run without faults:\n%s", diffLines(ref, got))
			}
		})
	}
}
