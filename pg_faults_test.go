package payments_test

// Money operations from two Services ("processes") on one PostgreSQL schema while
// their backends are terminated at random (pg_terminate_backend from an admin connection),
// one store runs with a low lock_timeout and statement_timeout and a pool of 2. Clients
// retry each operation with the same correlationID / endToEndId until it succeeds.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/postgres"
	"github.com/pixfoundry/payments/store/postgres/pgtest"
)

func killedPGStore(t *testing.T, base, app string, extra map[string]string) *postgres.Store {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", app)
	for k, v := range extra {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	s, err := postgres.Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPostgres_ServiceUnderKills(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	base := pgtest.URL(t)
	app := fmt.Sprintf("pgkills_%d", os.Getpid())
	st1 := killedPGStore(t, base, app+"_a", nil)
	st2 := killedPGStore(t, base, app+"_b", map[string]string{"pool_max_conns": "2", "lock_timeout": "200", "statement_timeout": "2000"})
	clock := payments.NewManualClock(t0)
	opts := func() payments.Options {
		return payments.Options{Clock: clock, Rail: payments.NewSandboxRail(clock, 0), SendTimeout: 5 * time.Second,
			DefaultCompany: payments.CreateCompanyParams{Name: "Loja Exemplo", PixKey: "pix@loja.example.com", MerchantName: "Loja", MerchantCity: "Sao Paulo"}}
	}
	a, err := payments.New(st1, opts())
	is.NoErr(err)
	b, err := payments.New(st2, opts())
	is.NoErr(err)
	svcs := []*payments.Service{a, b}

	acct, err := a.DefaultAccount(ctx)
	is.NoErr(err)
	is.NoErr(a.FundAccountForTest(ctx, acct.AccountID, 10_000_000))
	subs := []string{"s0@example.com", "s1@example.com", "s2@example.com"}
	for _, k := range subs {
		_, _, err := a.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: k, Name: "Sub " + k})
		is.NoErr(err)
		is.NoErr(a.FundSubaccountForTest(ctx, k, 1_000_000))
	}
	qr, err := a.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa"})
	is.NoErr(err)
	audit(t, a)

	admin, err := pgx.Connect(ctx, os.Getenv(pgtest.EnvURL))
	is.NoErr(err)
	defer admin.Close(ctx)

	stop := make(chan struct{})
	const killsPerAttempt = 4
	var kills, attempts atomic.Int64
	var killerWG sync.WaitGroup
	killerWG.Go(func() {
		rng := rand.New(rand.NewPCG(1, 2))
		var last int64 // attempts at the last kill
		budget := 0    // kills left until an operation is attempted again
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(10+rng.IntN(30)) * time.Millisecond): // the fault's pace, not a wait for a result
			}
			// At most killsPerAttempt kills while no operation is attempted: on a loaded
			// machine, where a transaction outlasts the pace, kills by the clock alone
			// outran the retries (the test ran for ten minutes in a CI run beside other
			// load, 15 s alone); on an idle one they are about three per attempt anyway.
			if n := attempts.Load(); n != last {
				last, budget = n, killsPerAttempt
			}
			if budget == 0 {
				continue
			}
			budget--
			var n int
			err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM (SELECT pid FROM pg_stat_activity
				WHERE application_name LIKE $1 ORDER BY random() LIMIT 1) p`, app+"%").Scan(&n)
			if err == nil {
				kills.Add(int64(n))
			}
		}
	})

	var mu sync.Mutex
	faultCodes := map[string]int{}   // code: message, for non-internal codes on a fault
	internalMsgs := map[string]int{} // cause texts of EINTERNAL
	var clientErrs []string
	ids := map[string]string{} // correlation -> id returned
	// call runs op until it succeeds, on alternating Services, and records what failed.
	call := func(name string, op func(svc *payments.Service) (string, error)) {
		for i := range 300 {
			svc := svcs[i%2]
			attempts.Add(1)
			id, err := op(svc)
			if err == nil {
				mu.Lock()
				if prev, ok := ids[name]; ok && prev != id {
					clientErrs = append(clientErrs, fmt.Sprintf("%s took effect twice: %s then %s", name, prev, id))
				}
				ids[name] = id
				mu.Unlock()
				return
			}
			code := payments.ErrorCode(err)
			mu.Lock()
			if code == payments.EINTERNAL || code == payments.ECANCELED {
				internalMsgs[err.Error()]++
				mu.Unlock()
				continue
			}
			faultCodes[string(code)]++
			clientErrs = append(clientErrs, fmt.Sprintf("%s (try %d): %s %q: %v", name, i, code, payments.ErrorField(err), err))
			mu.Unlock()
			return
		}
		mu.Lock()
		clientErrs = append(clientErrs, name+": never succeeded")
		mu.Unlock()
	}

	const workers, perWorker = 6, 10
	var received, credits, debits atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range perWorker {
				n := fmt.Sprintf("w%d.%d", w, i)
				e2e := fmt.Sprintf("E99999999202611220000%04d%07d", w, i)
				switch rng.IntN(6) {
				case 0: // a charge, paid
					var c payments.Charge
					call("charge "+n, func(svc *payments.Service) (string, error) {
						var err error
						c, err = svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c-" + n, Value: 500, ReturnExisting: true})
						return c.Identifier, err
					})
					if c.Identifier == "" {
						continue
					}
					call("pay "+e2e, func(svc *payments.Service) (string, error) {
						x, err := svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: e2e, Value: 500, TxID: c.Identifier})
						return x.ID, err
					})
					received.Add(500)
				case 1: // a static QR payment, then a refund of part of it
					call("pix "+e2e, func(svc *payments.Service) (string, error) {
						x, err := svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: e2e, Value: 1000, TxID: qr.Identifier})
						return x.ID, err
					})
					received.Add(1000)
					call("refund "+n, func(svc *payments.Service) (string, error) {
						r, err := svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: e2e, CorrelationID: "r-" + n, Value: 100})
						return r.RefundID, err
					})
				case 2: // a transfer between subaccounts
					from, to := subs[rng.IntN(3)], subs[rng.IntN(3)]
					if from == to {
						to = subs[(indexOf(subs, from)+1)%3]
					}
					call("transfer "+n, func(svc *payments.Service) (string, error) {
						tr, err := svc.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{Value: 100, FromPixKey: from, ToPixKey: to, CorrelationID: "t-" + n})
						return tr.ID, err
					})
				case 3: // credit a subaccount from the account
					k := subs[rng.IntN(3)]
					call("credit "+n, func(svc *payments.Service) (string, error) {
						m, err := svc.CreditSubaccount(ctx, payments.SubaccountMoveParams{PixKey: k, Value: 200, CorrelationID: "cr-" + n})
						return m.ID, err
					})
					credits.Add(200)
				case 4: // debit a subaccount to the account
					k := subs[rng.IntN(3)]
					call("debit "+n, func(svc *payments.Service) (string, error) {
						m, err := svc.DebitSubaccount(ctx, payments.SubaccountMoveParams{PixKey: k, Value: 150, CorrelationID: "db-" + n})
						return m.ID, err
					})
					debits.Add(150)
				case 5: // a withdrawal (an outgoing order), and the due pass
					call("withdraw "+n, func(svc *payments.Service) (string, error) {
						aw, err := svc.WithdrawFromAccount(ctx, acct.AccountID, 300, payments.WithdrawOptions{CorrelationID: "wd-" + n})
						return aw.Withdrawal.ID, err
					})
					call("due "+n, func(svc *payments.Service) (string, error) {
						return "", svc.RunDue(ctx)
					})
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	killerWG.Wait()
	t.Logf("backends terminated: %d; store retries: %d and %d", kills.Load(), st1.Retries(), st2.Retries())
	msgs := make([]string, 0, len(internalMsgs))
	for m, c := range internalMsgs {
		msgs = append(msgs, fmt.Sprintf("%4d  %s", c, m))
	}
	sort.Strings(msgs)
	for _, m := range msgs {
		t.Logf("EINTERNAL/ECANCELED: %s", m)
	}

	// The stores recover: after at most one failure per connection that died idle, calls succeed.
	for _, svc := range svcs {
		var err error
		for range 20 {
			if err = svc.RunDue(ctx); err == nil {
				break
			}
		}
		is.NoErr(err) // the store recovers
	}
	for _, e := range clientErrs {
		t.Errorf("fault reported to the client: %s", e)
	}
	t.Logf("fault codes: %v", faultCodes)
	rep, err := a.Audit(ctx)
	is.NoErr(err)
	is.True(rep.OK()) // audit clean
	if !rep.OK() {
		t.Logf("audit: %v", rep.Problems)
	}
	var subTotal int64
	for _, k := range subs {
		s, err := a.GetSubaccount(ctx, k)
		is.NoErr(err)
		subTotal += s.Balance
	}
	is.Equal(subTotal, int64(3*1_000_000)+credits.Load()-debits.Load()) // subaccount money conserved
}
