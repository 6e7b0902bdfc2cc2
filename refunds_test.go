package payments_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

func TestService_CreateChargeRefund(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "order", Value: 10000})
		x := pay(t, e, c) // account: 10000 - 80
		r, err := e.svc.CreateChargeRefund(ctx, "order", payments.CreateChargeRefundParams{CorrelationID: "r1", Value: 3000, Comment: "item devolvido"})
		is.NoErr(err)
		is.Equal(r.Status, payments.RefundInProcessing) // a new refund is in process
		is.Equal(r.TransactionEndToEndID, x.EndToEndID)
		is.Equal(r.Charge, "order")

		got, err := e.svc.GetRefund(ctx, "r1")
		is.NoErr(err)
		is.Equal(got.Status, payments.RefundConfirmed)  // the sandbox rail settles at once
		is.True(strings.HasPrefix(got.EndToEndID, "D")) // with the refund's own Pix id (a devolution: "D...")
		got2, err := e.svc.GetRefund(ctx, r.RefundID)
		is.NoErr(err)
		is.Equal(got2, got) // by refundId too
		is.Equal(balance(t, e), payments.Balance{Total: 9920 - 3000, Available: 9920 - 3000})

		again, err := e.svc.CreateChargeRefund(ctx, "order", payments.CreateChargeRefundParams{CorrelationID: "r1", Value: 3000})
		is.NoErr(err)
		is.Equal(again.RefundID, r.RefundID)                                                  // a retry returns the first refund
		is.Equal(balance(t, e), payments.Balance{Total: 9920 - 3000, Available: 9920 - 3000}) // and moves nothing

		_, err = e.svc.CreateChargeRefund(ctx, "order", payments.CreateChargeRefundParams{CorrelationID: "r2", Value: 7001})
		is.Equal(payments.ErrorCode(err), payments.EINVALID) // more than remains of the Pix
		is.Equal(payments.ErrorField(err), "value")
		_, err = e.svc.CreateChargeRefund(ctx, "order", payments.CreateChargeRefundParams{CorrelationID: "r2", Value: 100, Comment: strings.Repeat("a", 141)})
		is.Equal(payments.ErrorField(err), "comment") // comment over 140
		_, err = e.svc.CreateChargeRefund(ctx, "order", payments.CreateChargeRefundParams{Value: 100})
		is.Equal(payments.ErrorField(err), "correlationID") // correlationID required
		_, err = e.svc.CreateChargeRefund(ctx, "order", payments.CreateChargeRefundParams{CorrelationID: "r2", Value: -1})
		is.Equal(payments.ErrorField(err), "value")
		_, err = e.svc.CreateChargeRefund(ctx, "nope", payments.CreateChargeRefundParams{CorrelationID: "r2", Value: 1})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // unknown charge
		unpaid := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "unpaid", Value: 100})
		_, err = e.svc.CreateChargeRefund(ctx, unpaid.CorrelationID, payments.CreateChargeRefundParams{CorrelationID: "r2", Value: 1})
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // not paid

		_, err = e.svc.CreateChargeRefund(ctx, "order", payments.CreateChargeRefundParams{CorrelationID: "r2"})
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION)                                      // the rest (7000) is more than the account holds (6920)
		pay(t, e, createCharge(t, e, payments.CreateChargeParams{CorrelationID: "more", Value: 1000})) // +950
		r2, err := e.svc.CreateChargeRefund(ctx, "order", payments.CreateChargeRefundParams{CorrelationID: "r2"})
		is.NoErr(err)
		is.Equal(r2.Value, int64(7000)) // no value: all that remains
		_, err = e.svc.CreateChargeRefund(ctx, "order", payments.CreateChargeRefundParams{CorrelationID: "r3", Value: 1})
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // refunded in full

		rs, _, err := e.svc.ListChargeRefunds(ctx, "order", payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(rs), 2)
		is.Equal(rs[0].CorrelationID, "r2") // newest first
		rs, page, err := e.svc.ListRefunds(ctx, payments.ListParams{})
		is.NoErr(err)
		is.Equal(page.TotalCount, 2)
		is.Equal([]string{rs[0].CorrelationID, rs[1].CorrelationID}, []string{"r2", "r1"}) // all refunds, newest first
		is.Equal(balance(t, e), payments.Balance{Total: 9920 + 950 - 10000, Available: 9920 + 950 - 10000})
		audit(t, e.svc)
	})
}

// TestService_CreateRefund_CorrelationIDLikeARefundID: a refund is a retry of an earlier
// one only if their correlationIDs are the same; one whose correlationID was an earlier
// refund's refundId was answered with that refund, and nothing was refunded.
func TestService_CreateRefund_CorrelationIDLikeARefundID(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		pay(t, e, createCharge(t, e, payments.CreateChargeParams{CorrelationID: "order", Value: 10000}))
		r1, err := e.svc.CreateChargeRefund(ctx, "order", payments.CreateChargeRefundParams{CorrelationID: "r1", Value: 1000})
		is.NoErr(err)
		r2, err := e.svc.CreateChargeRefund(ctx, "order", payments.CreateChargeRefundParams{CorrelationID: r1.RefundID, Value: 1000})
		is.NoErr(err)
		is.Equal(r2.CorrelationID, r1.RefundID) // a refund of its own
		is.True(r2.RefundID != r1.RefundID)
		rs, _, err := e.svc.ListChargeRefunds(ctx, "order", payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(rs), 2) // both made
		_, _, err = e.svc.ListChargeRefunds(ctx, "", payments.ListParams{})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // no charge has an empty id (it was an internal error)
		again, err := e.svc.CreateChargeRefund(ctx, "order", payments.CreateChargeRefundParams{CorrelationID: r1.RefundID, Value: 1000})
		is.NoErr(err)
		is.Equal(again.RefundID, r2.RefundID) // and its retry is it
		audit(t, e.svc)
	})
}

func TestService_CreateRefund_NeedsBalance(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		_, _, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "loja@example.com", Name: "Loja"})
		is.NoErr(err)
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "sub", Value: 10000, Subaccount: "loja@example.com"})
		x := pay(t, e, c) // the money went to the subaccount: the account has nothing
		_, err = e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "r", Value: 100})
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // no available balance
		is.Equal(payments.ErrorField(err), "value")
		_, err = e.svc.GetRefund(ctx, "r")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nothing recorded
		got, err := e.svc.GetTransaction(ctx, x.EndToEndID)
		is.NoErr(err)
		is.Equal(got.RefundedValue, int64(0)) // nothing counted
		_, err = e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: "E000", CorrelationID: "r", Value: 100})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // unknown transaction
		audit(t, e.svc)
	})
}

// newDelayedEnv is an env whose sandbox rail settles a minute after sending.
func newDelayedEnv(t *testing.T) env {
	clock := payments.NewManualClock(t0)
	st := memory.New()
	svc, err := payments.New(st, payments.Options{Clock: clock, Rail: payments.NewSandboxRail(clock, time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	return env{svc: svc, clock: clock, store: st}
}

func TestService_RefundSettlement(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newDelayedEnv(t)
	c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "order", Value: 10000})
	x := pay(t, e, c)

	_, err := e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.TransactionID, CorrelationID: "ok", Value: 1000})
	is.NoErr(err)
	_, err = e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "fails", Value: payments.SandboxValueNotEnoughBalance})
	is.NoErr(err)
	is.Equal(balance(t, e), payments.Balance{Total: 9920, Blocked: 1666, Available: 9920 - 1666}) // held while in process
	refundTxs := func() map[string]payments.Transaction {                                         // REFUND transactions by refund id
		t.Helper()
		xs, _, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{Type: payments.TransactionRefund})
		is.NoErr(err)
		out := map[string]payments.Transaction{}
		for _, rx := range xs {
			out[rx.RefundID] = rx
		}
		return out
	}
	inProcess := refundTxs()
	is.Equal(len(inProcess), 2) // each refund is a REFUND transaction from the start
	n, err := e.svc.SettleRefunds(ctx)
	is.NoErr(err)
	is.Equal(n, 0) // the bank has not answered yet

	e.clock.Advance(time.Minute)
	n, err = e.svc.SettleRefunds(ctx)
	is.NoErr(err)
	is.Equal(n, 2)
	ok, err := e.svc.GetRefund(ctx, "ok")
	is.NoErr(err)
	is.Equal(ok.Status, payments.RefundConfirmed) // confirmed: the money left
	failed, err := e.svc.GetRefund(ctx, "fails")
	is.NoErr(err)
	is.Equal(failed.Status, payments.RefundRejected) // rejected by the sandbox trigger
	is.Equal(failed.Reason, payments.ReasonNotEnoughBalance)
	is.Equal(balance(t, e), payments.Balance{Total: 8920, Available: 8920}) // the rejected refund's money is back
	got, err := e.svc.GetTransaction(ctx, x.EndToEndID)
	is.NoErr(err)
	is.Equal(got.RefundedValue, int64(1000)) // a rejected refund does not count

	rx := inProcess[ok.RefundID]
	is.Equal(rx.Status, "IN_PROCESSING") // as created
	is.Equal(rx.Value, int64(1000))
	is.Equal(rx.Charge.CorrelationID, "order") // the charge whose Pix it sends back
	is.Equal(rx.EndToEndID, "")                // none until the bank has one
	is.True(rx.Raw == nil)                     // no bank callback reports a refund sent
	settled := refundTxs()
	is.Equal(settled[ok.RefundID].Status, "CONFIRMED")
	is.Equal(settled[ok.RefundID].EndToEndID, ok.EndToEndID) // the refund's own endToEndId
	is.Equal(settled[failed.RefundID].Status, "REJECTED")
	byE2E, err := e.svc.GetTransaction(ctx, ok.EndToEndID)
	is.NoErr(err)
	is.Equal(byE2E.Type, payments.TransactionRefund) // found by it, as the reference's get
	xs, _, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{Charge: "order"})
	is.NoErr(err)
	is.Equal(len(xs), 3) // the charge's payment and its two refunds
	n, err = e.svc.SettleRefunds(ctx)
	is.NoErr(err)
	is.Equal(n, 0) // settled once
	names := eventNames(t, e.svc)
	is.Equal(names[len(names)-2:], []string{"PIX_TRANSACTION_REFUND_SENT_CONFIRMED", "PIX_TRANSACTION_REFUND_SENT_REJECTED"}) // the real names: no vendor prefix
	is.Equal(ok.UpdatedAt, t0.Add(time.Minute))                                                                               // settled a minute later
	evs, err := e.svc.Events(ctx, 0, payments.MaxLimit)
	is.NoErr(err)
	for _, ev := range evs[len(evs)-2:] {
		var payload struct {
			RefundTransaction struct {
				Status        payments.RefundStatus `json:"status"`
				EndToEndID    string                `json:"endToEndId"`
				CorrelationID string                `json:"correlationID"`
			} `json:"refundTransaction"`
			Error string `json:"error"`
		}
		is.NoErr(json.Unmarshal(ev.Data, &payload))
		rt := payload.RefundTransaction
		is.True(rt.Status != payments.RefundInProcessing) // the refund as settled, not as it was
		if rt.Status == payments.RefundConfirmed {
			is.Equal(rt.EndToEndID, ok.EndToEndID) // the refund's own endToEndId
			is.Equal(rt.CorrelationID, ok.CorrelationID)
		} else {
			is.Equal(payload.Error, payments.ReasonNotEnoughBalance) // the bank's reason
		}
	}
	audit(t, e.svc)
}

func TestService_RefundTimestamps(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "ts", Value: 10000})
		x := pay(t, e, c)
		e.clock.Advance(time.Minute)
		r, err := e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "ts-1", Value: 100})
		is.NoErr(err)
		is.Equal(r.CreatedAt, t0.Add(time.Minute)) // when it was made
		is.Equal(r.UpdatedAt, r.CreatedAt)         // never the zero time
		cr, err := e.svc.CreateChargeRefund(ctx, "ts", payments.CreateChargeRefundParams{CorrelationID: "ts-2", Value: 100})
		is.NoErr(err)
		is.Equal(cr.UpdatedAt, t0.Add(time.Minute)) // a charge refund too
	})
}

// TestService_CashbackRejected: when the bank rejects the devolution that pays a cashback,
// the money stays with the company, an exclusive cashback is owed again (PENDING, paid by
// the customer's next payment) and a percentage one is REJECTED. Before, both stayed PAID
// and the customer's balance showed nothing owed.
func TestService_CashbackRejected(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		bia := func(corr string) payments.CreateChargeParams {
			return payments.CreateChargeParams{CorrelationID: corr, Value: 2000, EnableCashbackExclusivePercentage: true,
				Customer: &payments.CreateCustomerParams{Name: "Bia", TaxID: "11144477735"}}
		}
		_, _, err := e.svc.GetOrCreateExclusiveCashback(ctx, "11144477735", payments.SandboxValueNotEnoughBalance) // the sandbox bank rejects this value
		is.NoErr(err)
		x := pay(t, e, createCharge(t, e, bia("fid")))
		rs, _, err := e.svc.ListChargeRefunds(ctx, "fid", payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(rs), 1)
		is.Equal(rs[0].Status, payments.RefundRejected) // the devolution was rejected
		got, err := e.svc.GetTransaction(ctx, x.EndToEndID)
		is.NoErr(err)
		is.Equal(got.RefundedValue, int64(0))         // nothing went back
		is.Equal(balance(t, e).Total, int64(2000-50)) // the money is with the company
		b, err := e.svc.GetCashbackBalance(ctx, "11144477735")
		is.NoErr(err)
		is.Equal(b, payments.CashbackBalance{Balance: payments.SandboxValueNotEnoughBalance, Status: payments.CashbackPending}) // still owed
		audit(t, e.svc)

		pct := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "pct", Value: payments.SandboxValueNotEnoughBalance * 100, EnableCashbackPercentage: true})
		pay(t, e, pct) // 1% of it is the value the sandbox bank rejects
		rs, _, err = e.svc.ListChargeRefunds(ctx, "pct", payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(rs), 1)
		is.Equal(rs[0].Status, payments.RefundRejected)
		audit(t, e.svc)
		statuses := map[string]int{}
		is.NoErr(e.store.View(ctx, func(tx store.Tx) error { // as stored: no call lists cashbacks
			p, err := tx.List("cashbacks", payments.DefaultCompanyID, store.Query{Index: "all", Limit: 10})
			for _, r := range p.Records {
				var cb payments.Cashback
				is.NoErr(json.Unmarshal(r.Data, &cb))
				statuses[string(cb.Kind)+" "+string(cb.Status)]++
			}
			return err
		}))
		is.Equal(statuses, map[string]int{"EXCLUSIVE PENDING": 1, "PERCENTAGE REJECTED": 1})
	})
}

// TestService_CashbackRejected_PaidBefore: a cashback paid by a version that did not index
// cashbacks by their devolution, whose devolution the bank rejects after the upgrade, is
// found all the same and owed again.
func TestService_CashbackRejected_PaidBefore(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	st := memory.New()
	clock := payments.NewManualClock(t0)
	svc, err := payments.New(st, payments.Options{Clock: clock, Rail: payments.NewSandboxRail(clock, 5*time.Minute),
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja"}})
	is.NoErr(err)
	e := env{svc: svc, clock: clock, store: st}
	_, _, err = svc.GetOrCreateExclusiveCashback(ctx, "11144477735", payments.SandboxValueNotEnoughBalance)
	is.NoErr(err)
	pay(t, e, createCharge(t, e, payments.CreateChargeParams{CorrelationID: "fid", Value: 2000, EnableCashbackExclusivePercentage: true,
		Customer: &payments.CreateCustomerParams{Name: "Bia", TaxID: "11144477735"}}))
	b, err := svc.GetCashbackBalance(ctx, "11144477735")
	is.NoErr(err)
	is.Equal(b.Balance, int64(0))                     // on its way: the devolution settles in five minutes
	is.NoErr(st.Update(ctx, func(tx store.Tx) error { // as the older version stored it: no refund index
		p, err := tx.List("cashbacks", payments.DefaultCompanyID, store.Query{Index: "all", Limit: 10})
		if err != nil {
			return err
		}
		for _, r := range p.Records {
			r.Indexes = r.Indexes[:1] // creation only
			if err := tx.Put("cashbacks", payments.DefaultCompanyID, r); err != nil {
				return err
			}
		}
		return nil
	}))
	clock.Advance(6 * time.Minute)
	is.NoErr(svc.RunDue(ctx)) // the bank rejects it
	b, err = svc.GetCashbackBalance(ctx, "11144477735")
	is.NoErr(err)
	is.Equal(b, payments.CashbackBalance{Balance: payments.SandboxValueNotEnoughBalance, Status: payments.CashbackPending}) // owed again
	audit(t, svc)
}

func TestService_Cashback(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		t.Run("Percentage", func(t *testing.T) {
			is := is.New(t)
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "cb", Value: 10000, EnableCashbackPercentage: true,
				Customer: &payments.CreateCustomerParams{Name: "Ana", TaxID: "52998224725"}})
			before := balance(t, e).Total
			x := pay(t, e, c)
			is.Equal(balance(t, e).Total, before+10000-80-100) // 1% back to the payer
			got, err := e.svc.GetTransaction(ctx, x.EndToEndID)
			is.NoErr(err)
			is.Equal(got.RefundedValue, int64(100)) // as a devolution of the payment
			audit(t, e.svc)
		})
		t.Run("Exclusive", func(t *testing.T) {
			is := is.New(t)
			cb, created, err := e.svc.GetOrCreateExclusiveCashback(ctx, "111.444.777-35", 500)
			is.NoErr(err)
			is.True(created)
			is.Equal(cb.Status, payments.CashbackPending)
			again, created, err := e.svc.GetOrCreateExclusiveCashback(ctx, "11144477735", 900)
			is.NoErr(err)
			is.True(!created) // the pending one is returned
			is.Equal(again.ID, cb.ID)
			is.Equal(again.Value, int64(500))
			b, err := e.svc.GetCashbackBalance(ctx, "11144477735")
			is.NoErr(err)
			is.Equal(b, payments.CashbackBalance{Balance: 500, Status: payments.CashbackPending})

			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "fid", Value: 2000, EnableCashbackExclusivePercentage: true,
				Customer: &payments.CreateCustomerParams{Name: "Bia", TaxID: "11144477735"}})
			before := balance(t, e).Total
			pay(t, e, c)
			is.Equal(balance(t, e).Total, before+2000-50-500) // the promised cashback is paid
			b, err = e.svc.GetCashbackBalance(ctx, "11144477735")
			is.NoErr(err)
			is.Equal(b.Balance, int64(0)) // nothing left to receive

			_, _, err = e.svc.GetOrCreateExclusiveCashback(ctx, "123", 100)
			is.Equal(payments.ErrorField(err), "taxID")
			_, _, err = e.svc.GetOrCreateExclusiveCashback(ctx, "00000000191", 0)
			is.Equal(payments.ErrorField(err), "value")
			_, _, err = e.svc.GetOrCreateExclusiveCashback(ctx, "11144477735", 500)
			is.NoErr(err) // pending again
			_, _, err = e.svc.GetOrCreateExclusiveCashback(ctx, "11144477735", -1)
			is.Equal(payments.ErrorField(err), "value") // bad input is refused even with one pending
			audit(t, e.svc)
		})
		t.Run("ExclusiveOtherPayer", func(t *testing.T) {
			// A charge made out to Bia and paid by Caio: the devolution reaches Caio, so it
			// pays Caio's promise, not Bia's, which stays owed.
			is := is.New(t)
			_, _, err := e.svc.GetOrCreateExclusiveCashback(ctx, "39053344705", 500) // Bia
			is.NoErr(err)
			_, _, err = e.svc.GetOrCreateExclusiveCashback(ctx, "12345678909", 300) // Caio
			is.NoErr(err)
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "fid-other", Value: 2000, EnableCashbackExclusivePercentage: true,
				Customer: &payments.CreateCustomerParams{Name: "Bia", TaxID: "39053344705"}})
			x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 2000, TxID: c.Identifier[:25],
				Payer: &payments.Payer{Name: "Caio", TaxID: "12345678909"}})
			is.NoErr(err)
			got, err := e.svc.GetTransaction(ctx, x.EndToEndID)
			is.NoErr(err)
			is.Equal(got.RefundedValue, int64(300)) // Caio's cashback, to Caio
			bia, err := e.svc.GetCashbackBalance(ctx, "39053344705")
			is.NoErr(err)
			is.Equal(bia, payments.CashbackBalance{Balance: 500, Status: payments.CashbackPending}) // Bia is still owed hers
			caio, err := e.svc.GetCashbackBalance(ctx, "12345678909")
			is.NoErr(err)
			is.Equal(caio.Balance, int64(0))
			audit(t, e.svc)
		})
	})
}

// TestService_Cashback_ExclusiveBehindPercentage: each cashback a payment earns is paid if
// it fits in what the payment and the available balance leave, in order; one that does
// not fit no longer stops the ones after it. Here the 1% (100) does not fit in the
// account's 60 (the payment went to a subaccount), and the promised 50 does. Before, the
// 50 stayed owed.
func TestService_Cashback_ExclusiveBehindPercentage(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		mustSubaccount(t, e.svc, "loja@example.com", 0)
		fund(t, e, 60)
		_, _, err := e.svc.GetOrCreateExclusiveCashback(ctx, "11144477735", 50) // pay's payer
		is.NoErr(err)
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "both", Value: 10000, Subaccount: "loja@example.com",
			EnableCashbackPercentage: true, EnableCashbackExclusivePercentage: true})
		x := pay(t, e, c) // the net amount to the subaccount; the account still has 60
		got, err := e.svc.GetTransaction(ctx, x.EndToEndID)
		is.NoErr(err)
		b, err := e.svc.GetCashbackBalance(ctx, "11144477735")
		is.NoErr(err)
		is.Equal(b.Balance, int64(0))            // the promised 50 was paid
		is.Equal(got.RefundedValue, int64(50))   // as a devolution of this payment, without the 1%
		is.Equal(balance(t, e).Total, int64(10)) // from the account's 60
		audit(t, e.svc)
	})
}

// TestService_RefundEvent_GlobalID: a settled refund's event names its REFUND transaction
// by that transaction's globalID, which GetTransaction finds. Before, the globalID was
// made from the refund's id and found nothing.
func TestService_RefundEvent_GlobalID(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		pay(t, e, createCharge(t, e, payments.CreateChargeParams{CorrelationID: "order", Value: 10000}))
		r, err := e.svc.CreateChargeRefund(ctx, "order", payments.CreateChargeRefundParams{CorrelationID: "r1", Value: 1000})
		is.NoErr(err)
		evs, err := e.svc.Events(ctx, 0, payments.MaxLimit)
		is.NoErr(err)
		var payload struct {
			RefundTransaction struct {
				GlobalID   string `json:"globalID"`
				EndToEndID string `json:"endToEndId"`
				RefundID   string `json:"refundId"`
			} `json:"refundTransaction"`
		}
		n := 0
		for _, ev := range evs {
			if ev.Name == payments.EventRefundConfirmed {
				is.NoErr(json.Unmarshal(ev.Data, &payload))
				n++
			}
		}
		is.Equal(n, 1)
		is.Equal(payload.RefundTransaction.RefundID, r.RefundID)
		byE2E, err := e.svc.GetTransaction(ctx, payload.RefundTransaction.EndToEndID)
		is.NoErr(err) // the REFUND transaction, by the refund's endToEndId
		is.Equal(byE2E.RefundID, r.RefundID)
		byGlobalID, err := e.svc.GetTransaction(ctx, payload.RefundTransaction.GlobalID)
		is.NoErr(err) // and by the event's globalID
		is.Equal(byGlobalID.GlobalID, byE2E.GlobalID)
	})
}

// TestService_RefundEvent_NoWebhookAudit: a refund event's originalTransaction is the
// refunded Pix as read back from the store, without its webhook audit: the payload does not
// depend on what was delivered before it (nor show another webhook's deliveries).
func TestService_RefundEvent_NoWebhookAudit(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, err := payments.New(memory.New(), payments.Options{Clock: payments.NewManualClock(t0), WebhookSender: &countingSender{byURL: map[string]int{}},
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"}})
	is.NoErr(err)
	_, err = svc.CreateWebhook(ctx, payments.CreateWebhookParams{URL: "https://hooks.example.com/a"}) // TRANSACTION_RECEIVED
	is.NoErr(err)
	const e2e = "E4234567890123456789012345678901"
	_, err = svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: e2e, Value: 1000})
	is.NoErr(err)
	is.NoErr(svc.RunWebhooks(ctx)) // delivered: the Pix has a webhookSent entry
	x, err := svc.GetTransaction(ctx, e2e)
	is.NoErr(err)
	is.Equal(len(x.WebhookSent), 1)
	_, err = svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: e2e, CorrelationID: "r1", Value: 100})
	is.NoErr(err)
	evs, err := svc.Events(ctx, 0, payments.MaxLimit)
	is.NoErr(err)
	n := 0
	for _, ev := range evs {
		if ev.Name == svc.EventName(payments.EventRefundConfirmed) {
			n++
			is.True(strings.Contains(string(ev.Data), `"originalTransaction"`))
			is.True(!strings.Contains(string(ev.Data), "webhookSent")) // no delivery audit
		}
	}
	is.Equal(n, 1)
}

// TestService_CreateRefund_NinetyDays: a Pix is refunded up to 90 days after it arrived;
// later the refund is refused before any money is held, as every bank refuses it.
func TestService_CreateRefund_NinetyDays(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, memory.New())
	c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "old", Value: 10000})
	x := pay(t, e, c)
	e.clock.Advance(payments.MaxRefundAge)
	_, err := e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "r1", Value: 100})
	is.NoErr(err) // the 90th day still
	e.clock.Advance(time.Millisecond)
	before, err := e.svc.GetTransaction(ctx, x.EndToEndID)
	is.NoErr(err)
	_, err = e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: "r2", Value: 100})
	is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // past it
	is.Equal(payments.ErrorField(err), "transactionEndToEndId")
	after, err := e.svc.GetTransaction(ctx, x.EndToEndID)
	is.NoErr(err)
	is.Equal(after.RefundedValue, before.RefundedValue) // nothing held
	audit(t, e.svc)
}
