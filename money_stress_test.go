package payments_test

import (
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
	"github.com/pixfoundry/payments/store"
)

// TestMoneyStress runs random operations that move money, many at once, on every store,
// and checks the Service against a model built only from what the calls returned: the
// audit, every balance, each outcome against the sandbox's failure rules, refunded values,
// no correlationID or endToEndId taking effect twice, transaction list totals, event
// counts and sequence numbers. The operations of each wave are drawn from the seed before
// the wave runs them as goroutines, and the clock moves between waves.
//
// PAYMENTS_STRESS_SEEDS=a-b picks the seeds (default 1-3), PAYMENTS_STRESS_OPS the
// operations per seed (default 200): a failure names its seed, which draws the same
// operations again.

var stressTaxIDs = []string{"11144477735", "52998224725", "39053344705"}

const (
	stressBad = payments.SandboxKeyBankError // a subaccount whose withdrawals fail at the bank
)

var stressSubs = []string{"s0@example.com", "s1@example.com", stressBad}

type stressCharge struct {
	p payments.CreateChargeParams
	c payments.Charge
}

type stressModel struct {
	t  *testing.T
	mu sync.Mutex

	acct     string
	fundAcct int64
	fundSub  map[string]int64

	charges   map[string]*stressCharge // by correlationID
	chargeIDs []string
	txs       map[string]payments.Transaction // received, by endToEndId
	e2es      []string
	refunds   map[string]payments.Refund // by refundId
	refCorr   map[string]string          // correlationID -> refundId
	pays      map[string]payments.Payment
	payCorr   map[string]string
	approved  map[string]bool
	wds       map[string]payments.Withdrawal
	wdCorr    map[string]string
	transfers map[string]payments.SubaccountTransfer
	trCorr    map[string]string
	moves     map[string]payments.SubaccountMove
	mvCorr    map[string]string
	promises  map[string]payments.Cashback
	// shouldMatch: charges a Pix was sent to with the right value in time
	shouldMatch map[string]bool
	opsOK       int
}

func (m *stressModel) errorf(format string, args ...any) {
	m.t.Helper()
	m.t.Errorf(format, args...)
}

// sameID checks that a correlationID always names the same object.
func (m *stressModel) sameID(kind string, idx map[string]string, corr, id string) bool {
	if prev, ok := idx[corr]; ok && prev != id {
		m.errorf("%s correlationID %q took effect twice: %s and %s", kind, corr, prev, id)
		return false
	}
	idx[corr] = id
	return true
}

func TestMoneyStress(t *testing.T) {
	t.Parallel()
	lo, hi := uint64(1), uint64(3)
	if s := os.Getenv("PAYMENTS_STRESS_SEEDS"); s != "" {
		a, b, _ := strings.Cut(s, "-")
		lo, _ = strconv.ParseUint(a, 10, 64)
		hi = lo
		if b != "" {
			hi, _ = strconv.ParseUint(b, 10, 64)
		}
	}
	ops := 200
	if s := os.Getenv("PAYMENTS_STRESS_OPS"); s != "" {
		ops, _ = strconv.Atoi(s)
	}
	for _, st := range stores {
		for seed := lo; seed <= hi; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", st.name, seed), func(t *testing.T) {
				t.Logf("seed %d, %d ops", seed, ops)
				moneyStress(t, st.open(t), seed, ops)
			})
		}
	}
}

func moneyStress(t *testing.T, st store.Store, seed uint64, nops int) {
	is := is.New(t)
	rng := rand.New(rand.NewPCG(seed, 0xa0d17))
	clock := payments.NewManualClock(t0)
	delay := time.Duration(0)
	if seed%2 == 0 {
		delay = time.Minute
	}
	svc, err := payments.New(st, payments.Options{Clock: clock, Rail: payments.NewSandboxRail(clock, delay),
		SendTimeout: 5 * time.Second, DefaultCompany: payments.CreateCompanyParams{
			Name: "Loja Exemplo", PixKey: "pix@loja.example.com", MerchantName: "Loja Exemplo", MerchantCity: "Sao Paulo",
		}})
	is.NoErr(err)
	t.Cleanup(func() { st.Close() })
	m := &stressModel{t: t, fundSub: map[string]int64{}, charges: map[string]*stressCharge{},
		txs: map[string]payments.Transaction{}, refunds: map[string]payments.Refund{}, refCorr: map[string]string{},
		pays: map[string]payments.Payment{}, payCorr: map[string]string{}, approved: map[string]bool{},
		wds: map[string]payments.Withdrawal{}, wdCorr: map[string]string{}, transfers: map[string]payments.SubaccountTransfer{},
		trCorr: map[string]string{}, moves: map[string]payments.SubaccountMove{}, mvCorr: map[string]string{},
		promises: map[string]payments.Cashback{}, shouldMatch: map[string]bool{}}
	acct, err := svc.DefaultAccount(ctx)
	is.NoErr(err)
	m.acct = acct.AccountID
	is.NoErr(svc.FundAccountForTest(ctx, acct.AccountID, 200_000))
	m.fundAcct = 200_000
	for _, k := range stressSubs {
		_, _, err := svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: k, Name: "Sub " + k})
		is.NoErr(err)
		is.NoErr(svc.FundSubaccountForTest(ctx, k, 5000))
		m.fundSub[k] += 5000
	}
	qr, err := svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa"})
	is.NoErr(err)
	qrFixed, err := svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Fixo", Value: 1500})
	is.NoErr(err)

	var e2eN int
	newE2E := func() string {
		e2eN++
		return fmt.Sprintf("E9999999920261122%015d", int(seed)*1_000_000+e2eN)
	}
	const waves = 10
	perWave := max(nops/waves, 1)
	for wave := range waves {
		// draw the wave's operations here, so the draws are the seed's
		var ops []func()
		m.mu.Lock()
		chargeIDs := append([]string(nil), m.chargeIDs...)
		e2es := append([]string(nil), m.e2es...)
		m.mu.Unlock()
		now := clock.Now()
		for g := range perWave {
			name := fmt.Sprintf("w%d.g%d", wave, g)
			op := rng.IntN(15)
			if len(chargeIDs) == 0 && (op == 1 || op == 2) {
				op = 0
			}
			if len(e2es) == 0 && (op == 3 || op == 5) {
				op = 4
			}
			switch op {
			case 0: // create a charge
				p := payments.CreateChargeParams{CorrelationID: "c-" + name, Value: int64(rng.IntN(5000) + 100)}
				if rng.IntN(3) == 0 {
					p.Type = payments.ChargeOverdue
					p.DaysForDueDate, p.DaysAfterDueDate = rng.IntN(2)+1, rng.IntN(3)+1
					p.Fines = &payments.Fines{Value: int64(rng.IntN(100)), Type: payments.FineFixed}
					p.Interests = &payments.Interests{Value: int64(rng.IntN(20)), Type: payments.InterestFixed}
					if rng.IntN(2) == 0 {
						p.Discount = &payments.DiscountSettings{Modality: payments.DiscountValuePerDay, Value: int64(rng.IntN(20) + 1)}
					}
				} else {
					p.ExpiresIn = int64(rng.IntN(1500) + 900)
				}
				switch rng.IntN(4) {
				case 0:
					p.Subaccount = stressSubs[rng.IntN(len(stressSubs))]
				case 1:
					a := int64(rng.IntN(int(p.Value)/2) + 1)
					p.Splits = []payments.Split{{Value: a, PixKey: stressSubs[0]}, {Value: int64(rng.IntN(int(p.Value-a))) + 1, PixKey: stressSubs[1]}}
				}
				if rng.IntN(3) == 0 {
					p.EnableCashbackPercentage = true
				}
				if rng.IntN(3) == 0 {
					p.EnableCashbackExclusivePercentage = true
				}
				if rng.IntN(2) == 0 {
					p.Customer = &payments.CreateCustomerParams{Name: "Cliente", TaxID: stressTaxIDs[rng.IntN(len(stressTaxIDs))]}
				}
				ops = append(ops, func() {
					c, err := svc.CreateCharge(ctx, p)
					if err != nil {
						m.unexpected(name, "CreateCharge", err)
						return
					}
					m.mu.Lock()
					defer m.mu.Unlock()
					if _, dup := m.charges[p.CorrelationID]; dup {
						m.errorf("%s: charge %s created twice", name, p.CorrelationID)
					}
					m.charges[p.CorrelationID] = &stressCharge{p: p, c: c}
					m.chargeIDs = append(m.chargeIDs, p.CorrelationID)
					m.opsOK++
				})
			case 1, 2: // pay a charge, right (1) or wrong (2) amount, maybe settled earlier
				cid := chargeIDs[rng.IntN(len(chargeIDs))]
				for range 1 + rng.IntN(3) {
					e2e := newE2E()
					back := time.Duration(0)
					if rng.IntN(3) == 0 {
						back = time.Duration(rng.IntN(900)) * time.Second
					}
					wrong := op == 2
					var payer *payments.Payer
					if rng.IntN(2) == 0 {
						payer = &payments.Payer{Name: "Pagador", TaxID: stressTaxIDs[rng.IntN(len(stressTaxIDs))]}
					}
					ops = append(ops, func() {
						m.mu.Lock()
						sc := m.charges[cid]
						m.mu.Unlock()
						at := now.Add(-back)
						value := sc.c.Value
						if sc.c.Type == payments.ChargeOverdue || back == 0 {
							c, err := svc.GetCharge(ctx, cid)
							if err != nil {
								m.unexpected(name, "GetCharge", err)
								return
							}
							value, at = c.AmountDue, now
						}
						if wrong {
							value += 1
						}
						p := payments.ReceivePixParams{EndToEndID: e2e, Value: value, TxID: sc.c.Identifier, Payer: payer}
						if at != now {
							p.Time = at
						}
						x, err := svc.ReceivePix(ctx, p)
						if err != nil {
							m.unexpected(name, "ReceivePix", err)
							return
						}
						m.received(name, x)
						if !wrong && at.Before(sc.c.ExpiresDate) && sc.c.Type == payments.ChargeDynamic {
							m.mu.Lock()
							m.shouldMatch[cid] = true
							m.mu.Unlock()
						}
					})
				}
			case 3: // the same endToEndId again, same value
				e2e := e2es[rng.IntN(len(e2es))]
				ops = append(ops, func() {
					m.mu.Lock()
					first := m.txs[e2e]
					m.mu.Unlock()
					x, err := svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: e2e, Value: first.Value, TxID: "whatever"})
					if err != nil {
						m.unexpected(name, "ReceivePix dup", err)
						return
					}
					if x.ID != first.ID {
						m.errorf("%s: endToEndId %s took effect twice: %s then %s", name, e2e, first.ID, x.ID)
					}
				})
			case 4: // static QR payment (possibly the same e2e from two goroutines)
				e2e := newE2E()
				q, v := qr, int64(rng.IntN(3000)+1)
				if rng.IntN(3) == 0 {
					q = qrFixed
					if rng.IntN(2) == 0 {
						v = 1500
					}
				}
				f := func() {
					x, err := svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: e2e, Value: v, TxID: q.Identifier})
					if err != nil {
						m.unexpected(name, "ReceivePix qr", err)
						return
					}
					m.received(name, x)
				}
				ops = append(ops, f)
				if rng.IntN(3) == 0 {
					ops = append(ops, f)
				}
			case 5: // refund, correlationIDs collide
				e2e := e2es[rng.IntN(len(e2es))]
				corr := fmt.Sprint("r", rng.IntN(nops/4+1))
				v := int64(rng.IntN(800))
				if rng.IntN(8) == 0 {
					v = payments.SandboxValueNotEnoughBalance
				}
				n := 1 + rng.IntN(2)
				for range n {
					ops = append(ops, func() {
						r, err := svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: e2e, CorrelationID: corr, Value: v})
						if err != nil {
							m.refused(name, "CreateRefund", err)
							return
						}
						m.mu.Lock()
						defer m.mu.Unlock()
						if !m.sameID("refund", m.refCorr, corr, r.RefundID) {
							return
						}
						if prev, ok := m.refunds[r.RefundID]; ok && prev.Value != r.Value {
							m.errorf("%s: refund %s value %d then %d", name, corr, prev.Value, r.Value)
						}
						if _, ok := m.refunds[r.RefundID]; !ok {
							m.refunds[r.RefundID] = r
						}
						m.opsOK++
					})
				}
			case 6: // cashback promise
				tid := stressTaxIDs[rng.IntN(len(stressTaxIDs))]
				v := int64(rng.IntN(200) + 1)
				ops = append(ops, func() {
					cb, created, err := svc.GetOrCreateExclusiveCashback(ctx, tid, v)
					if err != nil {
						m.unexpected(name, "GetOrCreateExclusiveCashback", err)
						return
					}
					m.mu.Lock()
					defer m.mu.Unlock()
					if created {
						m.promises[cb.ID] = cb
					}
					m.opsOK++
				})
			case 7: // payment out, created and approved, approvals collide
				corr := fmt.Sprint("p", rng.IntN(nops/4+1))
				dests := []string{"ana@example.com", payments.SandboxKeyBankError, "bob@example.com"}
				dest := dests[rng.IntN(len(dests))]
				v := int64(rng.IntN(3000) + 1)
				if rng.IntN(8) == 0 {
					v = payments.SandboxValueNotEnoughBalance
				}
				auto := rng.IntN(3) == 0
				approvers := rng.IntN(3)
				ops = append(ops, func() {
					p, err := svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: corr, Value: v, DestinationAlias: dest, AutoApprove: auto})
					if err != nil {
						m.refused(name, "CreatePayment", err)
					} else {
						m.payment(name, p)
					}
				})
				for range approvers {
					ops = append(ops, func() {
						p, err := svc.ApprovePayment(ctx, corr)
						if err != nil {
							m.refused(name, "ApprovePayment", err)
							return
						}
						m.payment(name, p)
					})
				}
			case 8, 9: // withdrawals, account (8) or subaccount (9), correlationIDs retried
				corr := fmt.Sprint("w", rng.IntN(nops/4+1))
				if op == 9 {
					corr = "s" + corr
				}
				v := int64(rng.IntN(2000) + 1)
				if rng.IntN(8) == 0 {
					v = payments.SandboxValueNotEnoughBalance
				}
				key := stressSubs[rng.IntN(len(stressSubs))]
				if op == 9 && rng.IntN(6) == 0 {
					v = 0 // the whole balance
				}
				n := 1 + rng.IntN(2)
				for range n {
					ops = append(ops, func() {
						var w payments.Withdrawal
						if op == 8 {
							aw, err := svc.WithdrawFromAccount(ctx, m.acct, v, payments.WithdrawOptions{CorrelationID: corr})
							if err != nil {
								m.refused(name, "WithdrawFromAccount", err)
								return
							}
							w = aw.Withdrawal
						} else {
							var err error
							w, err = svc.WithdrawFromSubaccount(ctx, key, v, payments.WithdrawOptions{CorrelationID: corr})
							if err != nil {
								m.refused(name, "WithdrawFromSubaccount", err)
								return
							}
						}
						m.mu.Lock()
						defer m.mu.Unlock()
						if !m.sameID("withdrawal", m.wdCorr, corr, w.ID) {
							return
						}
						if _, ok := m.wds[w.ID]; !ok {
							m.wds[w.ID] = w
						}
						m.opsOK++
					})
				}
			case 10: // transfer between subaccounts
				from, to := stressSubs[rng.IntN(len(stressSubs))], stressSubs[rng.IntN(len(stressSubs))]
				if from == to {
					to = stressSubs[(rng.IntN(2)+1+indexOf(stressSubs, from))%len(stressSubs)]
				}
				corr := fmt.Sprint("t", rng.IntN(nops/4+1))
				v := int64(rng.IntN(2000) + 1)
				ops = append(ops, func() {
					tr, err := svc.TransferBetweenSubaccounts(ctx, payments.CreateSubaccountTransferParams{Value: v, FromPixKey: from, ToPixKey: to, CorrelationID: corr})
					if err != nil {
						m.refused(name, "TransferBetweenSubaccounts", err)
						return
					}
					m.mu.Lock()
					defer m.mu.Unlock()
					if !m.sameID("transfer", m.trCorr, corr, tr.ID) {
						return
					}
					m.transfers[tr.ID] = tr
					m.opsOK++
				})
			case 11: // subaccount debit or credit
				key := stressSubs[rng.IntN(len(stressSubs))]
				corr := fmt.Sprint("m", rng.IntN(nops/4+1))
				v := int64(rng.IntN(2000) + 1)
				debit := rng.IntN(2) == 0
				ops = append(ops, func() {
					p := payments.SubaccountMoveParams{PixKey: key, Value: v, CorrelationID: corr}
					var mv payments.SubaccountMove
					var err error
					if debit {
						mv, err = svc.DebitSubaccount(ctx, p)
					} else {
						mv, err = svc.CreditSubaccount(ctx, p)
					}
					if err != nil {
						m.refused(name, "moveSubaccount", err)
						return
					}
					m.mu.Lock()
					defer m.mu.Unlock()
					if !m.sameID("move", m.mvCorr, corr, mv.ID) {
						return
					}
					m.moves[mv.ID] = mv
					m.opsOK++
				})
			case 12: // the due pass, concurrently with everything else
				ops = append(ops, func() {
					if err := svc.RunDue(ctx); err != nil {
						m.errorf("%s: RunDue: %v", name, err)
					}
				})
			case 13: // a refund of all that remains, concurrent with others
				if len(e2es) == 0 {
					continue
				}
				e2e := e2es[rng.IntN(len(e2es))]
				corr := fmt.Sprint("rf", rng.IntN(nops/4+1))
				ops = append(ops, func() {
					r, err := svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: e2e, CorrelationID: corr})
					if err != nil {
						m.refused(name, "CreateRefund full", err)
						return
					}
					m.mu.Lock()
					defer m.mu.Unlock()
					if !m.sameID("refund", m.refCorr, corr, r.RefundID) {
						return
					}
					if _, ok := m.refunds[r.RefundID]; !ok {
						m.refunds[r.RefundID] = r
					}
					m.opsOK++
				})
			case 14: // ReceiveChargePix
				if len(chargeIDs) == 0 {
					continue
				}
				cid := chargeIDs[rng.IntN(len(chargeIDs))]
				e2e := newE2E()
				ops = append(ops, func() {
					x, _, err := svc.ReceiveChargePix(ctx, cid, payments.ReceivePixParams{EndToEndID: e2e})
					if err != nil {
						m.refused(name, "ReceiveChargePix", err)
						return
					}
					if x.Unmatched != "" {
						m.errorf("%s: ReceiveChargePix recorded an unmatched Pix: %s", name, x.Unmatched)
					}
					m.received(name, x)
				})
			}
		}
		rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
		var wg sync.WaitGroup
		for _, f := range ops {
			wg.Go(f)
		}
		wg.Wait()
		m.check(svc, fmt.Sprintf("after wave %d", wave), delay == 0)
		if t.Failed() {
			return
		}
		d := time.Duration(rng.IntN(120)+1) * time.Second
		if rng.IntN(4) == 0 {
			d = time.Duration(rng.IntN(36)+1) * time.Hour
		}
		if _, err := svc.AdvanceClock(ctx, clock, d); err != nil {
			t.Fatalf("wave %d: AdvanceClock(%s): %v", wave, d, err)
		}
		m.check(svc, fmt.Sprintf("after wave %d's clock move", wave), false)
		if t.Failed() {
			return
		}
	}
	_, err = svc.AdvanceClock(ctx, clock, 3*time.Hour)
	is.NoErr(err)
	is.NoErr(svc.RunDue(ctx))
	m.final(svc)
	cbr, matchedN := 0, 0
	for _, r := range m.refunds {
		if strings.HasPrefix(r.CorrelationID, "cashback-") {
			cbr++
		}
	}
	for _, x := range m.txs {
		if x.Unmatched == "" && x.Charge != nil {
			matchedN++
		}
	}
	t.Logf("seed %d: %d successful operations: %d charges, %d Pix (%d matched), %d refunds (%d cashback), %d payments (%d approved), %d withdrawals, %d transfers, %d moves, %d promises",
		seed, m.opsOK, len(m.charges), len(m.txs), matchedN, len(m.refunds), cbr, len(m.pays), len(m.approved), len(m.wds), len(m.transfers), len(m.moves), len(m.promises))
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

// unexpected: an operation that should have succeeded failed.
func (m *stressModel) unexpected(name, op string, err error) {
	m.t.Helper()
	m.errorf("%s: %s: %v (%s)", name, op, err, payments.ErrorCode(err))
}

// refused: refusals are fine, internal errors are not.
func (m *stressModel) refused(name, op string, err error) {
	m.t.Helper()
	switch payments.ErrorCode(err) {
	case payments.EINVALID, payments.EPRECONDITION, payments.ECONFLICT, payments.ENOTFOUND:
		return
	}
	m.errorf("%s: %s: %v (%s)", name, op, err, payments.ErrorCode(err))
}

func (m *stressModel) received(name string, x payments.Transaction) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.txs[x.EndToEndID]; ok {
		if prev.ID != x.ID {
			m.errorf("%s: endToEndId %s took effect twice: %s then %s", name, x.EndToEndID, prev.ID, x.ID)
		}
		return
	}
	if want := payments.DefaultFeePolicy().Fee(x.Value); x.Fee != want {
		m.errorf("%s: fee %d on %d, want %d", name, x.Fee, x.Value, want)
	}
	m.txs[x.EndToEndID] = x
	m.e2es = append(m.e2es, x.EndToEndID)
	m.opsOK++
}

func (m *stressModel) payment(name string, p payments.Payment) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.sameID("payment", m.payCorr, p.CorrelationID, p.ID) {
		return
	}
	if _, ok := m.pays[p.ID]; !ok {
		m.pays[p.ID] = p
	}
	if p.Status == payments.PaymentApproved {
		m.approved[p.ID] = true
	}
	m.opsOK++
}

// credits is where the model says a received Pix's net went: subaccounts, the rest to the account.
func (m *stressModel) credits(x payments.Transaction) (acct int64, subs map[string]int64) {
	subs = map[string]int64{}
	net := x.Value - x.Fee
	if x.Unmatched == "" && x.Charge != nil {
		if sc, ok := m.charges[x.Charge.CorrelationID]; ok {
			if sc.p.Subaccount != "" {
				subs[sc.p.Subaccount] += net
				net = 0
			}
			for _, sp := range sc.p.Splits {
				a := min(sp.Value, net)
				if a > 0 {
					subs[sp.PixKey] += a
					net -= a
				}
			}
		}
	}
	return net, subs
}

// check compares the service with the model. settled says no order may be pending.
func (m *stressModel) check(svc *payments.Service, when string, settled bool) {
	t := m.t
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	rep, err := svc.Audit(ctx)
	if err != nil {
		t.Fatalf("%s: audit: %v", when, err)
	}
	if !rep.OK() {
		t.Errorf("%s: audit: %v", when, rep.Problems)
	}
	// cashback refunds were made inside ReceivePix: adopt them from the list
	all, _, err := svc.ListRefunds(ctx, payments.ListParams{Limit: payments.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == payments.MaxLimit {
		t.Fatalf("too many refunds for one page")
	}
	for _, r := range all {
		if _, ok := m.refunds[r.RefundID]; ok {
			continue
		}
		if !strings.HasPrefix(r.CorrelationID, "cashback-") {
			t.Errorf("%s: refund %s (%s, %d) that no call of ours returned", when, r.RefundID, r.CorrelationID, r.Value)
			continue
		}
		x, ok := m.txs[r.TransactionEndToEndID]
		if !ok || x.Charge == nil || m.charges[x.Charge.CorrelationID] == nil ||
			!(m.charges[x.Charge.CorrelationID].p.EnableCashbackPercentage || m.charges[x.Charge.CorrelationID].p.EnableCashbackExclusivePercentage) {
			t.Errorf("%s: cashback refund %s of %s, not a cashback charge's Pix", when, r.CorrelationID, r.TransactionEndToEndID)
		}
		m.refunds[r.RefundID] = r
		m.refCorr[r.CorrelationID] = r.RefundID
	}
	if len(all) != len(m.refunds) {
		t.Errorf("%s: %d refunds listed, model has %d", when, len(all), len(m.refunds))
	}

	avail := m.fundAcct
	var blocked int64
	subs := map[string]int64{}
	for k, v := range m.fundSub {
		subs[k] += v
	}
	for _, x := range m.txs {
		a, s := m.credits(x)
		avail += a
		for k, v := range s {
			subs[k] += v
		}
	}
	refunded := map[string]int64{}
	for id, r0 := range m.refunds {
		r, err := svc.GetRefund(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Value != r0.Value || r.TransactionEndToEndID != r0.TransactionEndToEndID {
			t.Errorf("%s: refund %s changed: %+v -> %+v", when, id, r0, r)
		}
		switch r.Status {
		case payments.RefundInProcessing:
			if settled {
				t.Errorf("%s: refund %s still IN_PROCESSING with a rail that settles at once", when, r.CorrelationID)
			}
			avail -= r.Value
			blocked += r.Value
			refunded[r.TransactionEndToEndID] += r.Value
		case payments.RefundConfirmed:
			if r.Value == payments.SandboxValueNotEnoughBalance {
				t.Errorf("%s: refund %s of 666 confirmed", when, r.CorrelationID)
			}
			avail -= r.Value
			refunded[r.TransactionEndToEndID] += r.Value
		case payments.RefundRejected:
			if r.Value != payments.SandboxValueNotEnoughBalance {
				t.Errorf("%s: refund %s (%d) rejected: %s", when, r.CorrelationID, r.Value, r.Reason)
			}
		}
	}
	for e2e := range m.txs {
		x, err := svc.GetTransaction(ctx, e2e)
		if err != nil {
			t.Fatal(err)
		}
		if x.RefundedValue != refunded[e2e] {
			t.Errorf("%s: Pix %s refundedValue %d, its live refunds sum %d", when, e2e, x.RefundedValue, refunded[e2e])
		}
		if refunded[e2e] > x.Value {
			t.Errorf("%s: Pix %s refunded %d of %d", when, e2e, refunded[e2e], x.Value)
		}
	}
	for id := range m.approved {
		p, err := svc.GetPayment(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		fails := p.Value == payments.SandboxValueNotEnoughBalance || p.DestinationAlias == payments.SandboxKeyBankError
		switch p.Status {
		case payments.PaymentApproved:
			if settled {
				t.Errorf("%s: payment %s still APPROVED with a rail that settles at once", when, p.CorrelationID)
			}
			avail -= p.Value
			blocked += p.Value
		case payments.PaymentConfirmed:
			if fails {
				t.Errorf("%s: payment %s (%d to %s) confirmed", when, p.CorrelationID, p.Value, p.DestinationAlias)
			}
			avail -= p.Value
		case payments.PaymentFailed:
			if !fails {
				t.Errorf("%s: payment %s failed", when, p.CorrelationID)
			}
		default:
			t.Errorf("%s: approved payment %s is %s", when, p.CorrelationID, p.Status)
		}
	}
	for _, p0 := range m.pays {
		if m.approved[p0.ID] {
			continue
		}
		p, err := svc.GetPayment(ctx, p0.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != payments.PaymentCreated {
			t.Errorf("%s: payment %s is %s, but no approval of ours returned it approved", when, p.CorrelationID, p.Status)
		}
	}
	wdTx, _, err := svc.ListTransactions(ctx, payments.TransactionFilter{Type: payments.TransactionWithdraw, ListParams: payments.ListParams{Limit: payments.MaxLimit}})
	if err != nil {
		t.Fatal(err)
	}
	wdStatus := map[string]string{}
	for _, x := range wdTx {
		if x.Withdraw != nil {
			wdStatus[x.Withdraw.ID] = x.Status
		}
	}
	if len(wdTx) != len(m.wds) {
		t.Errorf("%s: %d WITHDRAW transactions, model has %d withdrawals", when, len(wdTx), len(m.wds))
	}
	for id, w := range m.wds {
		st := wdStatus[id]
		fails := w.Value == payments.SandboxValueNotEnoughBalance || w.Subaccount == stressBad
		cost := w.Value + w.Fee
		if w.AccountID != "" && w.Fee != payments.DefaultWithdrawalPolicy().FeeFor(w.Value) {
			t.Errorf("%s: withdrawal %s fee %d", when, w.CorrelationID, w.Fee)
		}
		switch st {
		case string(payments.WithdrawalCreated):
			if settled {
				t.Errorf("%s: withdrawal %s still CREATED with a rail that settles at once", when, w.CorrelationID)
			}
			if w.Subaccount != "" {
				subs[w.Subaccount] -= cost
			} else {
				avail -= cost
				blocked += cost
			}
		case string(payments.WithdrawalConfirmed):
			if fails {
				t.Errorf("%s: withdrawal %s (%d from %q) confirmed", when, w.CorrelationID, w.Value, w.Subaccount)
			}
			if w.Subaccount != "" {
				subs[w.Subaccount] -= cost
			} else {
				avail -= cost
			}
		case string(payments.WithdrawalFailed):
			if !fails {
				t.Errorf("%s: withdrawal %s failed", when, w.CorrelationID)
			}
		default:
			t.Errorf("%s: withdrawal %s has status %q", when, w.CorrelationID, st)
		}
	}
	for _, tr := range m.transfers {
		subs[tr.Origin.PixKey] -= tr.Value
		subs[tr.Destination.PixKey] += tr.Value
	}
	for _, mv := range m.moves {
		if mv.Kind == payments.SubaccountDebit {
			subs[mv.Subaccount.PixKey] -= mv.Value
			avail += mv.Value
		} else {
			subs[mv.Subaccount.PixKey] += mv.Value
			avail -= mv.Value
		}
	}
	a, err := svc.DefaultAccount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (payments.Balance{Total: avail + blocked, Blocked: blocked, Available: avail}); a.Balance != want {
		t.Errorf("%s: account balance %+v, model %+v", when, a.Balance, want)
	}
	for _, k := range stressSubs {
		sa, err := svc.GetSubaccount(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if sa.Balance != subs[k] {
			t.Errorf("%s: subaccount %s balance %d, model %d", when, k, sa.Balance, subs[k])
		}
		if sa.Balance < 0 {
			t.Errorf("%s: subaccount %s overdrawn", when, k)
		}
	}
	// charges: at most one matching Pix each, and the charge says which
	matched := map[string][]string{}
	for e2e, x := range m.txs {
		if x.Unmatched == "" && x.Charge != nil {
			matched[x.Charge.CorrelationID] = append(matched[x.Charge.CorrelationID], e2e)
		}
	}
	for cid := range m.charges {
		c, err := svc.GetCharge(ctx, cid)
		if err != nil {
			t.Fatal(err)
		}
		switch n := len(matched[cid]); {
		case n > 1:
			t.Errorf("%s: charge %s paid %d times: %v", when, cid, n, matched[cid])
		case n == 1:
			if c.Status != payments.ChargeCompleted || c.EndToEndID != matched[cid][0] {
				t.Errorf("%s: charge %s paid by %s but is %s by %q", when, cid, matched[cid][0], c.Status, c.EndToEndID)
			}
		case c.Status == payments.ChargeCompleted:
			t.Errorf("%s: charge %s COMPLETED by %s but no Pix of ours matched it", when, cid, c.EndToEndID)
		case m.shouldMatch[cid]:
			t.Errorf("%s: charge %s was paid its value in time but is %s", when, cid, c.Status)
		}
	}
	// the transaction list
	for typ, want := range map[payments.TransactionType]int{payments.TransactionPayment: len(m.txs), payments.TransactionRefund: len(m.refunds)} {
		xs, page, err := svc.ListTransactions(ctx, payments.TransactionFilter{Type: typ, ListParams: payments.ListParams{Limit: payments.MaxLimit}})
		if err != nil {
			t.Fatal(err)
		}
		if page.TotalCount != want || len(xs) != min(want, payments.MaxLimit) {
			t.Errorf("%s: %d %s transactions (%d listed), model %d", when, page.TotalCount, typ, len(xs), want)
		}
		if typ == payments.TransactionPayment {
			var sum, msum int64
			for _, x := range xs {
				sum += x.Value
			}
			for _, x := range m.txs {
				msum += x.Value
			}
			if sum != msum && len(xs) == want {
				t.Errorf("%s: PAYMENT transactions sum %d, model %d", when, sum, msum)
			}
		}
	}
	m.checkEvents(svc, when, matched)
}

func (m *stressModel) checkEvents(svc *payments.Service, when string, matched map[string][]string) {
	t := m.t
	t.Helper()
	count := map[string]int{}
	var last uint64
	first := true
	for {
		evs, err := svc.Events(ctx, last, payments.MaxLimit)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if !first && ev.Seq != last+1 {
				t.Errorf("%s: event seq %d after %d", when, ev.Seq, last)
			}
			first = false
			last = ev.Seq
			count[strings.TrimPrefix(ev.Name, "OPENPIX:")]++
		}
		if len(evs) < payments.MaxLimit {
			break
		}
	}
	want := map[string]int{
		payments.EventChargeCreated:       len(m.charges),
		payments.EventTransactionReceived: len(m.txs),
		payments.EventChargeCompleted:     len(matched),
	}
	for id := range m.refunds {
		r, _ := svc.GetRefund(ctx, id)
		switch r.Status {
		case payments.RefundConfirmed:
			want[payments.EventRefundConfirmed]++
		case payments.RefundRejected:
			want[payments.EventRefundRejected]++
		}
	}
	for id := range m.approved {
		p, _ := svc.GetPayment(ctx, id)
		switch p.Status {
		case payments.PaymentConfirmed:
			want[payments.EventMovementConfirmed]++
		case payments.PaymentFailed:
			want[payments.EventMovementFailed]++
		}
	}
	names := []string{}
	for k := range want {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if count[k] != want[k] {
			t.Errorf("%s: %d %s events, model %d", when, count[k], k, want[k])
		}
	}
}

func (m *stressModel) final(svc *payments.Service) {
	m.check(svc, "final", true)
	a, err := svc.DefaultAccount(ctx)
	if err != nil {
		m.t.Fatal(err)
	}
	if a.Balance.Blocked != 0 {
		m.t.Errorf("final: %d still blocked", a.Balance.Blocked)
	}
}
