package payments_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/rail/sandbox"
	"github.com/pixfoundry/payments/store"
)

// Keys of the companies of the routing tests: the default company's (newEnv) and a
// second one's.
const (
	keyA = "pix@loja.example.com"
	keyB = "pix@outra.example.com"
)

// bankEnv is an env whose Service has the sandbox bank as its Rail (a rail.Collector),
// with a second company, B.
type bankEnv struct {
	env
	bank *sandbox.Rail
	b    *payments.Service // the second company
}

// eachStoreBank runs fn once per store driver, each on a fresh bankEnv.
func eachStoreBank(t *testing.T, fn func(t *testing.T, e bankEnv)) {
	t.Helper()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) { fn(t, newBankEnv(t, st.open(t))) })
	}
}

func newBankEnv(t *testing.T, st store.Store) bankEnv {
	t.Helper()
	clock := payments.NewManualClock(t0)
	bank := sandbox.New(clock, 0)
	svc, err := payments.New(st, payments.Options{Clock: clock, Rail: bank, DefaultCompany: payments.CreateCompanyParams{
		Name: "Loja Exemplo", PixKey: keyA, MerchantName: "Loja Exemplo", MerchantCity: "Sao Paulo",
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := bankEnv{env: env{svc: svc, clock: clock, store: st}, bank: bank}
	e.b = newCompany(t, svc, "Outra Loja", keyB)
	return e
}

// newCompany creates a company with the Pix key and returns its Service.
func newCompany(t *testing.T, svc *payments.Service, name, key string) *payments.Service {
	t.Helper()
	co, err := svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: name, PixKey: key})
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.Company(ctx, co.ID)
	if err != nil {
		t.Fatal(err)
	}
	return other
}

// bankPix is a Pix of value to key as a bank reports it, settled now.
func bankPix(e bankEnv, key string, value int64) rail.ReceivedPix {
	return rail.ReceivedPix{EndToEndID: newE2E(), Key: key, Value: value, At: e.clock.Now(),
		PayerName: "Payer", PayerTaxID: "11144477735", Message: "obrigado"}
}

// balanceOf is the default account's balance of svc's company.
func balanceOf(t *testing.T, svc *payments.Service) payments.Balance {
	t.Helper()
	a, err := svc.DefaultAccount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return a.Balance
}

// transactionIDs are the transactionIDs of svc's company's transactions.
func transactionIDs(t *testing.T, svc *payments.Service) []string {
	t.Helper()
	xs, _, err := svc.ListTransactions(ctx, payments.TransactionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range xs {
		out = append(out, x.TransactionID)
	}
	return out
}

func TestService_ReceiveBankPix(t *testing.T) {
	t.Parallel()
	eachStoreBank(t, func(t *testing.T, e bankEnv) {
		t.Run("ByKey", func(t *testing.T) {
			is := is.New(t)
			beforeA := balanceOf(t, e.svc)
			p := bankPix(e, keyB, 1000)
			r, err := e.svc.ReceiveBankPix(ctx, p) // the default company's Service: it does not matter
			is.NoErr(err)
			is.Equal(r.CompanyID, e.b.CompanyID()) // the company that holds the key
			is.True(r.New)                         // recorded by this call
			is.True(r.Unmatched == nil)
			is.Equal(r.Transaction.EndToEndID, p.EndToEndID)
			is.Equal(r.Transaction.Value, int64(1000))
			is.Equal(r.Transaction.PixKey, keyB)
			is.Equal(balanceOf(t, e.b).Total, 1000-r.Transaction.Fee) // credited to B, less the fee
			is.Equal(balanceOf(t, e.svc), beforeA)                    // A unchanged

			x, err := e.b.GetTransaction(ctx, r.Transaction.TransactionID)
			is.NoErr(err)
			is.Equal(x.EndToEndID, p.EndToEndID) // B has it
			_, err = e.svc.GetTransaction(ctx, r.Transaction.TransactionID)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)                                    // A does not
			is.True(!strings.Contains(strings.Join(transactionIDs(t, e.svc), ","), x.TransactionID)) // nor lists it

			again, err := e.b.ReceiveBankPix(ctx, p) // B's Service, this time: the same answer
			is.NoErr(err)
			is.True(!again.New)                                        // delivered before: nothing changed
			is.Equal(again.CompanyID, r.CompanyID)                     // the same company
			is.Equal(again.Transaction.TransactionID, x.TransactionID) // the same transaction
			is.Equal(balanceOf(t, e.b).Total, 1000-r.Transaction.Fee)  // credited once

			p.Value++
			_, err = e.svc.ReceiveBankPix(ctx, p)
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // another Pix with its endToEndId
			is.Equal(payments.ErrorField(err), "endToEndId")
			audit(t, e.svc)
			audit(t, e.b)
		})

		t.Run("ByTxidOfAnotherCompany", func(t *testing.T) {
			for _, key := range []string{keyA, "ninguem@example.com", ""} {
				is := is.New(t)
				c, err := e.b.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "txid-" + key, Value: 2500})
				is.NoErr(err)
				beforeA := balanceOf(t, e.svc)
				p := bankPix(e, key, 2500)
				p.TxID = c.Identifier[:25]
				r, err := e.svc.ReceiveBankPix(ctx, p)
				is.NoErr(err)
				is.Equal(r.CompanyID, e.b.CompanyID()) // the charge's company, whatever the key says
				got, err := e.b.GetCharge(ctx, c.CorrelationID)
				is.NoErr(err)
				is.Equal(got.Status, payments.ChargeCompleted) // the charge is paid
				is.Equal(got.EndToEndID, p.EndToEndID)
				is.Equal(balanceOf(t, e.svc), beforeA) // A got nothing
			}
			audit(t, e.svc)
			audit(t, e.b)
		})

		t.Run("ByFullTransactionID", func(t *testing.T) {
			is := is.New(t)
			c, err := e.b.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "full-id", Value: 700})
			is.NoErr(err)
			p := bankPix(e, "", 700)
			p.TxID = c.TransactionID // the charge's whole transactionID, which ReceivePix also takes
			r, err := e.svc.ReceiveBankPix(ctx, p)
			is.NoErr(err)
			is.Equal(r.CompanyID, e.b.CompanyID()) // routed by the txid it implies
			is.Equal(r.Transaction.Charge.CorrelationID, "full-id")
		})

		t.Run("DeletedCharge", func(t *testing.T) {
			is := is.New(t)
			c, err := e.b.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "deleted", Value: 800})
			is.NoErr(err)
			is.NoErr(e.b.DeleteCharge(ctx, c.CorrelationID))
			p := bankPix(e, "", 800)
			p.TxID = c.Identifier[:25]
			r, err := e.svc.ReceiveBankPix(ctx, p)
			is.NoErr(err)
			is.Equal(r.CompanyID, e.b.CompanyID())              // its company still gets it
			is.Equal(r.Transaction.Unmatched, "charge deleted") // marked, for it to refund
		})

		t.Run("StaticQRCodeWithinTheKeysCompany", func(t *testing.T) {
			is := is.New(t)
			qa, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa A", Identifier: "caixa1"})
			is.NoErr(err)
			qb, err := e.b.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa B", Identifier: "caixa1"})
			is.NoErr(err) // identifiers are the companies' own: both have caixa1
			p := bankPix(e, keyB, 300)
			p.TxID = "caixa1"
			r, err := e.svc.ReceiveBankPix(ctx, p)
			is.NoErr(err)
			is.Equal(r.CompanyID, e.b.CompanyID())       // the key's company
			is.Equal(r.Transaction.PixQrCode.ID, qb.ID)  // and its code
			is.True(r.Transaction.PixQrCode.ID != qa.ID) // not the other company's
		})

		t.Run("ToAnAccountsKey", func(t *testing.T) {
			is := is.New(t)
			acct, err := e.b.CreateAccount(ctx, payments.CreateAccountParams{PixKey: "caixa@outra.example.com"})
			is.NoErr(err)
			before := balanceOf(t, e.b)
			r, err := e.svc.ReceiveBankPix(ctx, bankPix(e, "caixa@outra.example.com", 1200))
			is.NoErr(err)
			is.Equal(r.CompanyID, e.b.CompanyID())
			is.Equal(r.Transaction.PixKey, "caixa@outra.example.com")
			got, err := e.b.GetAccount(ctx, acct.AccountID)
			is.NoErr(err)
			is.Equal(got.Balance.Total, 1200-r.Transaction.Fee) // the account whose key it is
			is.Equal(balanceOf(t, e.b), before)                 // not the default account
			audit(t, e.b)
		})

		t.Run("ToASubaccountsKey", func(t *testing.T) {
			is := is.New(t)
			mustSubaccount(t, e.b, "vendedor@outra.example.com", 0)
			before := balanceOf(t, e.b)
			r, err := e.svc.ReceiveBankPix(ctx, bankPix(e, "vendedor@outra.example.com", 1500))
			is.NoErr(err)
			is.True(r.Unmatched != nil) // a subaccount's key is its owner's, at their bank: not B's to receive at
			sa, err := e.b.GetSubaccount(ctx, "vendedor@outra.example.com")
			is.NoErr(err)
			is.Equal(sa.Balance, int64(0))      // nothing credited to it
			is.Equal(balanceOf(t, e.b), before) // nor to B
		})
	})
}

// TestService_ReceivePixAtOtherKeys: the company's own ReceivePix takes its accounts' keys,
// crediting them, and refuses a key that is none of its accounts' (a subaccount's too).
func TestService_ReceivePixAtOtherKeys(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		acct, err := e.svc.CreateAccount(ctx, payments.CreateAccountParams{PixKey: "caixa@loja.example.com"})
		is.NoErr(err)
		mustSubaccount(t, e.svc, "vendedor@loja.example.com", 0)
		x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 1000, PixKey: "CAIXA@loja.example.com"})
		is.NoErr(err)
		is.Equal(x.PixKey, "caixa@loja.example.com") // canonical
		got, err := e.svc.GetAccount(ctx, acct.AccountID)
		is.NoErr(err)
		is.Equal(got.Balance.Total, 1000-x.Fee) // the account's
		_, err = e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 1000, PixKey: "vendedor@loja.example.com"})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // a subaccount's key is its owner's, not one the company receives at
		sa, err := e.svc.GetSubaccount(ctx, "vendedor@loja.example.com")
		is.NoErr(err)
		is.Equal(sa.Balance, int64(0))          // nothing moved
		is.Equal(balance(t, e).Total, int64(0)) // none to the default account
		z, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 1000, PixKey: "pix@loja.example.com"})
		is.NoErr(err)
		is.Equal(balance(t, e).Total, 1000-z.Fee) // the company's key: the default account, as ever
		_, err = e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: newE2E(), Value: 1000, PixKey: "ninguem@example.com"})
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // not a key of the company
		audit(t, e.svc)
	})
}

func TestService_UnmatchedPix(t *testing.T) {
	t.Parallel()
	eachStoreBank(t, func(t *testing.T, e bankEnv) {
		is := is.New(t)
		p := bankPix(e, "ninguem@example.com", 4200)
		p.TxID = "desconhecido"
		r, err := e.svc.ReceiveBankPix(ctx, p)
		is.NoErr(err)
		is.Equal(r.CompanyID, "") // no company
		is.True(r.New)
		is.True(r.Unmatched != nil) // kept
		is.Equal(r.Unmatched.EndToEndID, p.EndToEndID)
		is.Equal(r.Unmatched.Value, int64(4200))
		is.Equal(r.Unmatched.PixKey, "ninguem@example.com")

		list, page, err := e.b.ListUnmatchedPix(ctx, payments.UnmatchedPixFilter{Unassigned: true})
		is.NoErr(err)
		is.Equal(page.TotalCount, 1) // listed, whichever company's Service asks
		is.Equal(list[0].EndToEndID, p.EndToEndID)

		again, err := e.svc.ReceiveBankPix(ctx, p)
		is.NoErr(err)
		is.True(!again.New)                      // the same Pix again changes nothing
		is.Equal(*again.Unmatched, *r.Unmatched) // and returns the same record
		_, page, err = e.svc.ListUnmatchedPix(ctx, payments.UnmatchedPixFilter{})
		is.NoErr(err)
		is.Equal(page.TotalCount, 1) // still one
		other := p
		other.Value++
		_, err = e.svc.ReceiveBankPix(ctx, other)
		is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // another value under its endToEndId
		is.Equal(balanceOf(t, e.svc).Total, int64(0))         // no company was credited
		is.Equal(balanceOf(t, e.b).Total, int64(0))

		_, _, err = e.svc.AssignUnmatchedPix(ctx, "E000unknown", e.b.CompanyID())
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // no such unmatched Pix
		is.Equal(payments.ErrorField(err), "endToEndId")
		_, _, err = e.svc.AssignUnmatchedPix(ctx, p.EndToEndID, "nocompany")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // no such company
		is.Equal(payments.ErrorField(err), "companyId")

		e.clock.Advance(time.Hour)
		x, u, err := e.svc.AssignUnmatchedPix(ctx, p.EndToEndID, e.b.CompanyID())
		is.NoErr(err)
		is.Equal(x.EndToEndID, p.EndToEndID)
		is.Equal(x.Value, int64(4200))
		is.True(x.Time.Equal(p.At)) // when it settled, not when it was assigned
		is.Equal(u.CompanyID, e.b.CompanyID())
		is.Equal(u.TransactionID, x.TransactionID)
		is.Equal(balanceOf(t, e.b).Total, 4200-x.Fee) // the chosen company is credited
		is.Equal(balanceOf(t, e.svc).Total, int64(0)) // the other is not
		got, err := e.b.GetTransaction(ctx, x.TransactionID)
		is.NoErr(err)
		is.Equal(got.EndToEndID, p.EndToEndID) // B has the transaction

		_, _, err = e.svc.AssignUnmatchedPix(ctx, p.EndToEndID, e.svc.CompanyID())
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // assigned already
		is.Equal(payments.ErrorField(err), "endToEndId")
		_, page, err = e.svc.ListUnmatchedPix(ctx, payments.UnmatchedPixFilter{Unassigned: true})
		is.NoErr(err)
		is.Equal(page.TotalCount, 0) // none waits
		list, _, err = e.svc.ListUnmatchedPix(ctx, payments.UnmatchedPixFilter{})
		is.NoErr(err)
		is.Equal(list[0].CompanyID, e.b.CompanyID()) // the record says where it went
		is.True(list[0].AssignedAt != nil)

		late, err := e.svc.ReceiveBankPix(ctx, p) // the reconciliation, after the assignment
		is.NoErr(err)
		is.True(!late.New)                        // nothing new
		is.Equal(late.CompanyID, e.b.CompanyID()) // the company it was assigned to
		is.Equal(late.Transaction.TransactionID, x.TransactionID)
		is.Equal(balanceOf(t, e.b).Total, 4200-x.Fee) // credited once
		audit(t, e.svc)
		audit(t, e.b)
	})
}

// TestService_ReceivedPixOncePerNetwork: an endToEndId one company recorded is not
// recorded by another, by its own ReceivePix or by routing.
func TestService_ReceivedPixOncePerNetwork(t *testing.T) {
	t.Parallel()
	eachStoreBank(t, func(t *testing.T, e bankEnv) {
		is := is.New(t)
		p := bankPix(e, keyA, 900)
		x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: p.EndToEndID, Value: 900})
		is.NoErr(err)
		_, err = e.b.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: p.EndToEndID, Value: 900})
		is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // A recorded it
		is.Equal(payments.ErrorField(err), "endToEndId")
		p.Key = keyB // as if B had the key now: the first record wins
		r, err := e.svc.ReceiveBankPix(ctx, p)
		is.NoErr(err)
		is.True(!r.New)
		is.Equal(r.CompanyID, e.svc.CompanyID())
		is.Equal(r.Transaction.TransactionID, x.TransactionID)
		is.Equal(balanceOf(t, e.b).Total, int64(0)) // B got nothing
	})
}

func TestService_PixKeysAcrossCompanies(t *testing.T) {
	t.Parallel()
	eachStoreBank(t, func(t *testing.T, e bankEnv) {
		acct, err := e.svc.CreateAccount(ctx, payments.CreateAccountParams{PixKey: "caixa@loja.example.com"})
		if err != nil {
			t.Fatal(err)
		}
		mustSubaccount(t, e.svc, "vendedor@loja.example.com", 0)
		taken := []string{keyA, acct.PixKey}
		refused := func(t *testing.T, err error, key string) {
			t.Helper()
			is := is.New(t)
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // another company's key
			is.Equal(payments.ErrorField(err), "pixKey")          // naming the field
			is.Equal(payments.ErrorMessage(err), "Pix key "+key+" belongs to another company")
		}
		// routesTo checks that a Pix to key still goes to svc's company.
		routesTo := func(t *testing.T, key string, svc *payments.Service) {
			t.Helper()
			is := is.New(t)
			r, err := e.svc.ReceiveBankPix(ctx, bankPix(e, key, 1))
			is.NoErr(err)
			is.Equal(r.CompanyID, svc.CompanyID()) // the key is where it belongs
		}
		t.Run("CreateCompany", func(t *testing.T) {
			is := is.New(t)
			before := companies(t, e.store)
			for _, key := range append(taken, keyB, "PIX@Loja.Example.com") {
				_, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Terceira", PixKey: key})
				refused(t, err, strings.ToLower(key))
			}
			is.Equal(companies(t, e.store), before) // no company was written
			routesTo(t, keyA, e.svc)
		})
		t.Run("UpdateCompany", func(t *testing.T) {
			is := is.New(t)
			for _, key := range taken {
				_, err := e.b.UpdateCompany(ctx, payments.CompanyUpdate{PixKey: &key})
				refused(t, err, key)
			}
			co, err := e.b.GetCompany(ctx)
			is.NoErr(err)
			is.Equal(co.PixKey, keyB) // unchanged
			routesTo(t, keyB, e.b)    // and still B's

			moved := "novo@outra.example.com"
			_, err = e.b.UpdateCompany(ctx, payments.CompanyUpdate{PixKey: &moved})
			is.NoErr(err)
			routesTo(t, moved, e.b) // the new key is B's
			c, err := e.svc.CreateAccount(ctx, payments.CreateAccountParams{PixKey: keyB})
			is.NoErr(err) // the old one is free: A takes it
			routesTo(t, keyB, e.svc)
			back := keyB
			_, err = e.b.UpdateCompany(ctx, payments.CompanyUpdate{PixKey: &back})
			refused(t, err, keyB) // and B cannot have it back
			is.True(c.AccountID != "")
		})
		t.Run("CreateAccount", func(t *testing.T) {
			is := is.New(t)
			for _, key := range taken {
				_, err := e.b.CreateAccount(ctx, payments.CreateAccountParams{PixKey: key})
				refused(t, err, key)
			}
			as, _, err := e.b.ListAccounts(ctx, payments.ListParams{})
			is.NoErr(err)
			is.Equal(len(as), 1) // only its default account
		})
		t.Run("CreateSubaccount", func(t *testing.T) {
			is := is.New(t)
			// A subaccount's key is its owner's, at their own bank (withdrawals go to it):
			// two companies may pay out to one seller, so the key is not refused.
			sa, created, err := e.b.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: "vendedor@loja.example.com", Name: "O mesmo vendedor"})
			is.NoErr(err)
			is.True(created)
			is.Equal(sa.Balance, int64(0)) // a book of its own
			for _, key := range taken {    // the keys A receives at are still A's
				routesTo(t, key, e.svc)
			}
		})
	})
}

// companies is how many companies the store holds.
func companies(t *testing.T, st store.Store) int {
	t.Helper()
	var n int
	err := st.View(ctx, func(tx store.Tx) error {
		p, err := tx.List("companies", "_system", store.Query{Index: "all"})
		n = p.Total
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestService_Reconcile(t *testing.T) {
	t.Parallel()
	eachStoreBank(t, func(t *testing.T, e bankEnv) {
		is := is.New(t)
		c, err := e.b.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "missed", Value: 5000})
		is.NoErr(err)
		delivered := bankPix(e, keyA, 1000) // its webhook arrived
		missedKey := bankPix(e, keyB, 2000) // its webhook was lost
		missedCharge := bankPix(e, "", 5000)
		missedCharge.TxID = c.Identifier[:25]
		nobody := bankPix(e, "ninguem@example.com", 300)
		for _, p := range []rail.ReceivedPix{delivered, missedKey, missedCharge, nobody} {
			is.NoErr(e.bank.Receive(p))
		}
		_, err = e.svc.ReceiveBankPix(ctx, delivered)
		is.NoErr(err)
		e.clock.Advance(time.Hour)

		from, to := t0.Add(-time.Hour), e.clock.Now()
		res, err := e.svc.Reconcile(ctx, from, to)
		is.NoErr(err)
		is.Equal(res, payments.ReconcileResult{Listed: 4, Recorded: 2, Known: 1, Unmatched: 1}) // what the webhooks missed
		got, err := e.b.GetCharge(ctx, c.CorrelationID)
		is.NoErr(err)
		is.Equal(got.Status, payments.ChargeCompleted) // the missed payment completed the charge
		a, b := balanceOf(t, e.svc), balanceOf(t, e.b)

		res, err = e.svc.Reconcile(ctx, from, to) // and again
		is.NoErr(err)
		is.Equal(res, payments.ReconcileResult{Listed: 4, Known: 4}) // nothing new
		is.Equal(balanceOf(t, e.svc), a)                             // nothing moved twice
		is.Equal(balanceOf(t, e.b), b)
		is.Equal(len(transactionIDs(t, e.svc)), 1) // A: the delivered Pix, once
		is.Equal(len(transactionIDs(t, e.b)), 2)   // B: the two it missed, once each
		_, page, err := e.svc.ListUnmatchedPix(ctx, payments.UnmatchedPixFilter{})
		is.NoErr(err)
		is.Equal(page.TotalCount, 1) // kept once
		audit(t, e.svc)              // the ledgers agree with the balances
		audit(t, e.b)

		res, err = e.svc.Reconcile(ctx, to, to.Add(time.Hour))
		is.NoErr(err)
		is.Equal(res, payments.ReconcileResult{}) // a window with nothing in it

		_, err = e.svc.Reconcile(ctx, to, from)
		is.Equal(payments.ErrorCode(err), payments.EINVALID) // a window that ends before it starts
	})
}

// TestService_ReconcilePages: a listing of several pages is followed to its end.
func TestService_ReconcilePages(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newBankEnv(t, stores[0].open(t))
	const n = 230 // more than two of the sandbox's pages
	for i := range n {
		p := bankPix(e, keyA, 1)
		p.At = t0.Add(time.Duration(i) * time.Second)
		is.NoErr(e.bank.Receive(p))
	}
	e.clock.Advance(time.Hour)
	res, err := e.svc.Reconcile(ctx, t0, time.Time{})
	is.NoErr(err)
	is.Equal(res, payments.ReconcileResult{Listed: n, Recorded: n}) // every page
	_, page, err := e.svc.ListTransactions(ctx, payments.TransactionFilter{})
	is.NoErr(err)
	is.Equal(page.TotalCount, n) // each Pix once
}

// notCollector is a Rail that lists nothing: the sandbox's Rail methods only.
type notCollector struct{ payments.Rail }

func TestService_ReconcileNotCollector(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	clock := payments.NewManualClock(t0)
	svc, err := payments.New(stores[0].open(t), payments.Options{Clock: clock, Rail: notCollector{sandbox.New(clock, 0)}})
	is.NoErr(err)
	_, err = svc.Reconcile(ctx, t0, t0.Add(time.Hour))
	is.Equal(payments.ErrorCode(err), payments.ENOTIMPLEMENTED) // the bank lists nothing
	is.True(strings.Contains(payments.ErrorMessage(err), "lists no received Pix"))
}
