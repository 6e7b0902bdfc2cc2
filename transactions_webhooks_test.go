package payments_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// TestListTransactions_HasWebhook: on every store, each filter with hasWebhook true or
// false lists what the same filter without it lists, less the transactions with (false)
// or without (true) a webhookSent entry, paged the same way, with the same total: alone,
// with a type, a charge, a charge and a type, a static QR code, a QR code and a type, a
// withdrawal, a withdrawal and a type, and in a time window. Another company lists none
// of them and finds none.
func TestListTransactions_HasWebhook(t *testing.T) {
	t.Parallel()
	eachWebhookStore(t, payments.Options{WebhookAttempts: 1}, func(t *testing.T, e env) {
		is := is.New(t)
		svc := e.svc
		q, err := svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa", CorrelationID: "q1"})
		is.NoErr(err)
		pix := func(value int64, txid string) {
			_, err := svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: value, TxID: txid})
			is.NoErr(err)
			e.clock.Advance(time.Second)
		}
		pix(500, "")           // before any webhook: never audited
		pix(700, q.Identifier) // to the QR code, never audited
		c0, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c0", Value: 900})
		is.NoErr(err)
		pay(t, e, c0) // paid before the webhooks: never audited
		r := newReceiver(t)
		r.answer = func(n int, d delivery) int {
			if d.event == svc.EventName(payments.EventChargeCompleted) {
				return 500 // given up at once: a FAILED entry
			}
			return 200
		}
		createWebhook(t, svc, r.URL+"/received", payments.EventTransactionReceived)
		createWebhook(t, svc, r.URL+"/completed", payments.EventChargeCompleted)
		for i := range 3 {
			c, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprint("c", i+1), Value: 1000})
			is.NoErr(err)
			pay(t, e, c)
			e.clock.Advance(time.Second)
		}
		pix(800, q.Identifier)
		_, err = svc.CreateChargeRefund(ctx, "c2", payments.CreateChargeRefundParams{CorrelationID: "r1", Value: 300})
		is.NoErr(err)
		_, err = svc.CreateChargeRefund(ctx, "c0", payments.CreateChargeRefundParams{CorrelationID: "r0", Value: 100})
		is.NoErr(err)
		acct, err := svc.DefaultAccount(ctx)
		is.NoErr(err)
		w, err := svc.WithdrawFromAccount(ctx, acct.AccountID, 500)
		is.NoErr(err)
		is.NoErr(svc.RunDue(ctx))

		all, _, err := svc.ListTransactions(ctx, payments.TransactionFilter{})
		is.NoErr(err)
		with := 0
		for _, x := range all {
			if len(x.WebhookSent) > 0 {
				with++
			}
		}
		is.True(with >= 4 && with < len(all)) // both kinds

		ids := func(xs []payments.Transaction) []string {
			out := []string{}
			for _, x := range xs {
				out = append(out, x.EndToEndID)
			}
			return out
		}
		bases := []payments.TransactionFilter{{}, {Type: payments.TransactionPayment}, {Type: payments.TransactionRefund},
			{Charge: "c0"}, {Charge: "c1"}, {Charge: "c2"}, {Charge: "c2", Type: payments.TransactionRefund}, {Charge: "c0", Type: payments.TransactionPayment},
			{PixQrCode: "q1"}, {PixQrCode: "q1", Type: payments.TransactionPayment},
			{Withdrawal: w.Withdrawal.ID}, {Withdrawal: w.Transaction.EndToEndID, Type: payments.TransactionWithdraw}, {Type: payments.TransactionWithdraw},
			{Start: t0.Add(2 * time.Second), End: t0.Add(5 * time.Second)}}
		pages := []payments.ListParams{{}, {Skip: 1, Limit: 2}, {Skip: 2, Limit: 1}, {Skip: 50, Limit: 10}}
		for _, base := range bases {
			every, info, err := svc.ListTransactions(ctx, base) // without the filter
			is.NoErr(err)
			is.Equal(info.TotalCount, len(every))
			if base.Withdrawal != "" {
				is.Equal(len(every), 1) // the withdrawal's own transaction
			}
			for _, has := range []bool{true, false} {
				var kept []payments.Transaction
				for _, x := range every {
					if len(x.WebhookSent) > 0 == has {
						kept = append(kept, x)
					}
				}
				for _, p := range pages {
					f := base
					f.HasWebhook, f.ListParams = &has, p
					got, info, err := svc.ListTransactions(ctx, f)
					is.NoErr(err)
					limit := p.Limit
					if limit == 0 {
						limit = payments.DefaultLimit
					}
					want := kept[min(p.Skip, len(kept)):]
					want = want[:min(limit, len(want))]
					if fmt.Sprint(ids(got)) != fmt.Sprint(ids(want)) || info.TotalCount != len(kept) {
						t.Errorf("%+v hasWebhook=%v: got %v (total %d), want %v (total %d)", base, has, ids(got), info.TotalCount, ids(want), len(kept))
					}
					for i := range min(len(got), len(want)) {
						is.Equal(got[i].WebhookSent, want[i].WebhookSent)
					}
				}
			}
		}

		// another company sees none of it, with or without the filter
		co, err := svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Outra Loja"})
		is.NoErr(err)
		other, err := svc.Company(ctx, co.ID)
		is.NoErr(err)
		for _, has := range []*bool{nil, new(true), new(false)} {
			for _, base := range bases {
				base.HasWebhook = has
				xs, info, err := other.ListTransactions(ctx, base)
				is.NoErr(err)
				is.Equal(len(xs), 0)
				is.Equal(info.TotalCount, 0)
			}
		}
		for _, x := range all {
			_, err := other.GetTransaction(ctx, x.EndToEndID)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
		}
	})
}
