package payments_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/store/memory"
)

// movement is the payload of the MOVEMENT_* events.
type movement struct {
	Payment struct {
		Value            int64  `json:"value"`
		Status           string `json:"status"`
		DestinationAlias string `json:"destinationAlias"`
		Comment          string `json:"comment"`
		CorrelationID    string `json:"correlationID"`
	} `json:"payment"`
	Transaction *struct {
		Value                  int64     `json:"value"`
		EndToEndID             string    `json:"endToEndId"`
		Time                   time.Time `json:"time"`
		ProviderRejectedReason string    `json:"providerRejectedReason"`
	} `json:"transaction"`
	Error *struct {
		Code        string `json:"code"`
		Description string `json:"description"`
	} `json:"error"`
}

func TestService_CreatePayment(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		fund(t, e, 10000)
		p, err := e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p1", Value: 2500,
			DestinationAlias: "ana@example.com", DestinationAliasType: "EMAIL", Comment: "aluguel"})
		is.NoErr(err)
		is.Equal(p.Status, payments.PaymentCreated) // requested, nothing held
		is.Equal(p.Type, payments.PaymentPixKey)    // no type: a Pix key
		is.Equal(p.DestinationAliasType, "EMAIL")
		is.True(p.Destination.Name != "")                  // resolved in the Rail's directory
		is.Equal(p.Destination.PixKey, "ana@example.com")  // the key paid
		is.Equal(p.Destination.Bank, payments.SandboxISPB) // the sandbox bank
		is.True(p.Transaction == nil)                      // no Pix yet
		is.Equal(balance(t, e).Available, int64(10000))    // nothing held
		got, err := e.svc.GetPayment(ctx, p.ID)
		is.NoErr(err)
		is.Equal(got, p) // by id
		got, err = e.svc.GetPayment(ctx, "p1")
		is.NoErr(err)
		is.Equal(got, p) // by correlationID

		_, err = e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p1", Value: 100, DestinationAlias: "ana@example.com"})
		is.Equal(payments.ErrorMessage(err), "Já existe um pagamento com o correlationID fornecido") // the real API's words

		rnd, err := e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "p2", Value: 100,
			DestinationAlias: "123e4567-e89b-12d3-a456-426614174000", DestinationAliasType: "RANDOM"})
		is.NoErr(err)
		is.Equal(rnd.DestinationAliasType, "RANDOM") // the wire's name for EVP
		audit(t, e.svc)
	})
}

func TestService_ApprovePayment(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		fund(t, e, 10000)
		mustPayment(t, e.svc, "p1", 2500, "ana@example.com")
		p, err := e.svc.ApprovePayment(ctx, "p1")
		is.NoErr(err)
		is.Equal(p.Status, payments.PaymentApproved) // as approved
		is.Equal(p.Transaction.Value, int64(2500))
		got, err := e.svc.GetPayment(ctx, "p1")
		is.NoErr(err)
		is.Equal(got.Status, payments.PaymentConfirmed)                         // the sandbox settled it at once
		is.Equal(len(got.Transaction.EndToEndID), 32)                           // with the Pix's endToEndId
		is.Equal(balance(t, e), payments.Balance{Total: 7500, Available: 7500}) // the money left

		evs := eventPayloads[movement](t, e.svc, payments.EventMovementConfirmed)
		is.Equal(len(evs), 1)
		is.Equal(evs[0].Payment.CorrelationID, "p1")
		is.Equal(evs[0].Payment.Status, "CONFIRMED")
		is.Equal(evs[0].Payment.DestinationAlias, "ana@example.com")
		is.Equal(evs[0].Transaction.EndToEndID, got.Transaction.EndToEndID) // the payload of §5.1

		_, err = e.svc.ApprovePayment(ctx, "p1")
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // approving twice pays once
		is.True(strings.Contains(payments.ErrorMessage(err), "CONFIRMED"))
		is.Equal(balance(t, e).Total, int64(7500))
		audit(t, e.svc)
	})
}

func TestService_ApprovePayment_AutoApprove(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		fund(t, e, 1000)
		p, err := e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "a1", Value: 400, DestinationAlias: "ana@example.com", AutoApprove: true})
		is.NoErr(err)
		is.Equal(p.Status, payments.PaymentApproved) // approved in the same call
		is.Equal(paymentStatus(t, e.svc, "a1"), payments.PaymentConfirmed)
		_, err = e.svc.CreatePayment(ctx, payments.CreatePaymentParams{CorrelationID: "a2", Value: 700, DestinationAlias: "ana@example.com", AutoApprove: true})
		is.Equal(payments.ErrorMessage(err), "You do not have enough balance to make this payment")
		_, err = e.svc.GetPayment(ctx, "a2")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nothing recorded
		is.Equal(balance(t, e).Total, int64(600))
		audit(t, e.svc)
	})
}

// TestService_ApprovePayment_Triggers: every sandbox failure returns the money and says why.
func TestService_ApprovePayment_Triggers(t *testing.T) {
	t.Parallel()
	manual := func(account string) *payments.BankAccount {
		return &payments.BankAccount{ISPB: "00000000", Branch: "0001", Account: account, HolderName: "Ana Silva", HolderTaxID: "11144477735"}
	}
	cases := []struct {
		name   string
		params payments.CreatePaymentParams
		reason string
	}{
		{"BankErrorKey", payments.CreatePaymentParams{Value: 500, DestinationAlias: payments.SandboxKeyBankError}, payments.ReasonBankError},
		{"Value666", payments.CreatePaymentParams{Value: 666, DestinationAlias: "ana@example.com"}, payments.ReasonNotEnoughBalance},
		{"Account1111111", payments.CreatePaymentParams{Type: payments.PaymentManual, Value: 500, Account: manual("1111111")}, "ACCOUNT_NOT_FOUND"},
		{"Account2222222", payments.CreatePaymentParams{Type: payments.PaymentManual, Value: 500, Account: manual("2222222")}, "NOT_ENOUGH_BALANCE"},
		{"Account3333333", payments.CreatePaymentParams{Type: payments.PaymentManual, Value: 500, Account: manual("3333333-1")}, "INVALID_PIX_KEY"},
		{"Account5555555", payments.CreatePaymentParams{Type: payments.PaymentManual, Value: 500, Account: manual("5555555")}, "AC06"},
		{"Account1010110", payments.CreatePaymentParams{Type: payments.PaymentManual, Value: 500, Account: manual("1010110")}, "AM04"},
		{"Account1010115", payments.CreatePaymentParams{Type: payments.PaymentManual, Value: 500, Account: manual("1010115")}, "MD01"},
	}
	eachStore(t, func(t *testing.T, e env) {
		fund(t, e, 10000)
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				tc.params.CorrelationID = fmt.Sprint("t", i)
				_, err := e.svc.CreatePayment(ctx, tc.params)
				is.NoErr(err)
				_, err = e.svc.ApprovePayment(ctx, tc.params.CorrelationID)
				is.NoErr(err) // approved; the bank fails it
				p, err := e.svc.GetPayment(ctx, tc.params.CorrelationID)
				is.NoErr(err)
				is.Equal(p.Status, payments.PaymentFailed)                                // failed
				is.Equal(p.Transaction.ProviderRejectedReason, tc.reason)                 // with the trigger's code
				is.Equal(balance(t, e), payments.Balance{Total: 10000, Available: 10000}) // the money came back
			})
		}
		is := is.New(t)
		evs := eventPayloads[movement](t, e.svc, payments.EventMovementFailed)
		is.Equal(len(evs), len(cases)) // one MOVEMENT_FAILED each
		is.Equal(evs[0].Error.Code, payments.ReasonBankError)
		is.Equal(evs[0].Payment.Status, "FAILED")
		is.Equal(evs[1].Transaction.ProviderRejectedReason, payments.ReasonNotEnoughBalance)
		audit(t, e.svc)
	})
}

func TestService_CreatePayment_QRCode(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		fund(t, e, 10000)
		withAmount, err := brcode.EncodeStatic(brcode.Static{Key: "bia@example.com", Name: "Bia", City: "Recife", Amount: 1234})
		is.NoErr(err)
		p, err := e.svc.CreatePayment(ctx, payments.CreatePaymentParams{Type: payments.PaymentQRCode, QRCode: withAmount, CorrelationID: "q1"})
		is.NoErr(err)
		is.Equal(p.Value, int64(1234))                  // the code's amount
		is.Equal(p.DestinationAlias, "bia@example.com") // and key
		_, err = e.svc.CreatePayment(ctx, payments.CreatePaymentParams{Type: payments.PaymentQRCode, QRCode: withAmount, CorrelationID: "q2", Value: 99})
		is.Equal(payments.ErrorField(err), "value") // another amount than the code's
		open, err := brcode.EncodeStatic(brcode.Static{Key: "bia@example.com", Name: "Bia", City: "Recife"})
		is.NoErr(err)
		_, err = e.svc.CreatePayment(ctx, payments.CreatePaymentParams{Type: payments.PaymentQRCode, QRCode: open, CorrelationID: "q3"})
		is.Equal(payments.ErrorField(err), "value") // no amount in the code: value is required
		p, err = e.svc.CreatePayment(ctx, payments.CreatePaymentParams{Type: payments.PaymentQRCode, QRCode: open, CorrelationID: "q4", Value: 300})
		is.NoErr(err)
		_, err = e.svc.ApprovePayment(ctx, "q4")
		is.NoErr(err)
		is.Equal(paymentStatus(t, e.svc, "q4"), payments.PaymentConfirmed)
		_, err = e.svc.CreatePayment(ctx, payments.CreatePaymentParams{Type: payments.PaymentQRCode, QRCode: "000201junk", CorrelationID: "q5"})
		is.Equal(payments.ErrorField(err), "qrCode") // not a BR Code
		notFound, err := brcode.EncodeStatic(brcode.Static{Key: payments.SandboxKeyNotFound, Name: "X", City: "Y", Amount: 100})
		is.NoErr(err)
		_, err = e.svc.CreatePayment(ctx, payments.CreatePaymentParams{Type: payments.PaymentQRCode, QRCode: notFound, CorrelationID: "q6"})
		is.Equal(payments.ErrorField(err), "qrCode") // its key has no owner
		is.Equal(balance(t, e).Total, int64(9700))
		audit(t, e.svc)
	})
}

// TestService_Payment_BadInput: each is a 400 (EINVALID, ENOTFOUND or EPRECONDITION) that
// moves nothing.
func TestService_Payment_BadInput(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		fund(t, e, 1000)
		mustPayment(t, e.svc, "big", 5000, "ana@example.com")
		mustPayment(t, e.svc, "done", 100, "ana@example.com")
		_, err := e.svc.ApprovePayment(ctx, "done")
		if err != nil {
			t.Fatal(err)
		}
		mustPayment(t, e.svc, "fails", 100, payments.SandboxKeyBankError)
		if _, err := e.svc.ApprovePayment(ctx, "fails"); err != nil {
			t.Fatal(err)
		}
		before := balance(t, e)
		create := func(p payments.CreatePaymentParams) error { _, err := e.svc.CreatePayment(ctx, p); return err }
		approve := func(corr string) error { _, err := e.svc.ApprovePayment(ctx, corr); return err }
		cases := []struct {
			name  string
			err   error
			field string
			code  payments.Code
		}{
			{"ZeroValue", create(payments.CreatePaymentParams{CorrelationID: "b1", Value: 0, DestinationAlias: "ana@example.com"}), "value", payments.EINVALID},
			{"NegativeValue", create(payments.CreatePaymentParams{CorrelationID: "b2", Value: -5, DestinationAlias: "ana@example.com"}), "value", payments.EINVALID},
			{"MalformedKey", create(payments.CreatePaymentParams{CorrelationID: "b3", Value: 5, DestinationAlias: "not a key"}), "destinationAlias", payments.EINVALID},
			{"TypeMismatch", create(payments.CreatePaymentParams{CorrelationID: "b4", Value: 5, DestinationAlias: "11144477735", DestinationAliasType: "EMAIL"}), "destinationAlias", payments.EINVALID},
			{"UnknownType", create(payments.CreatePaymentParams{CorrelationID: "b5", Value: 5, DestinationAlias: "ana@example.com", DestinationAliasType: "IBAN"}), "destinationAliasType", payments.EINVALID},
			{"UnknownKey", create(payments.CreatePaymentParams{CorrelationID: "b6", Value: 5, DestinationAlias: payments.SandboxKeyNotFound}), "destinationAlias", payments.EINVALID},
			{"NoCorrelationID", create(payments.CreatePaymentParams{Value: 5, DestinationAlias: "ana@example.com"}), "correlationID", payments.EINVALID},
			{"BadType", create(payments.CreatePaymentParams{Type: "WIRE", CorrelationID: "b7", Value: 5}), "type", payments.EINVALID},
			{"ManualWithoutAccount", create(payments.CreatePaymentParams{Type: payments.PaymentManual, CorrelationID: "b8", Value: 5}), "account", payments.EINVALID},
			{"ManualBadTaxID", create(payments.CreatePaymentParams{Type: payments.PaymentManual, CorrelationID: "b9", Value: 5,
				Account: &payments.BankAccount{ISPB: "00000000", Branch: "1", Account: "123", HolderName: "A", HolderTaxID: "123"}}), "holder.taxID", payments.EINVALID},
			{"AboveAvailable", approve("big"), "value", payments.EPRECONDITION},
			{"UnknownPayment", approve("nope"), "", payments.ENOTFOUND},
			{"AlreadyApproved", approve("done"), "correlationID", payments.EPRECONDITION},
			{"Failed", approve("fails"), "correlationID", payments.EPRECONDITION},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				is.Equal(payments.ErrorCode(tc.err), tc.code)   // a 400 of the right kind
				is.Equal(payments.ErrorField(tc.err), tc.field) // naming the input
			})
		}
		is := is.New(t)
		is.Equal(payments.ErrorMessage(cases[10].err), "You do not have enough balance to make this payment")
		is.True(strings.Contains(payments.ErrorMessage(cases[13].err), "FAILED")) // names the state
		is.Equal(balance(t, e), before)                                           // nothing moved
		audit(t, e.svc)
	})
}

func TestService_ListPayments(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		for i := range 5 {
			mustPayment(t, e.svc, fmt.Sprint("l", i), 100, "ana@example.com")
			e.clock.Advance(time.Hour)
		}
		ps, page, err := e.svc.ListPayments(ctx, payments.PaymentFilter{ListParams: payments.ListParams{Limit: 2}})
		is.NoErr(err)
		is.Equal(len(ps), 2)
		is.Equal(ps[0].CorrelationID, "l4") // newest first
		is.Equal(page.TotalCount, 5)
		is.True(page.HasNextPage)
		ps, _, err = e.svc.ListPayments(ctx, payments.PaymentFilter{ListParams: payments.ListParams{Skip: 4, Limit: 2}})
		is.NoErr(err)
		is.Equal(len(ps), 1) // the last page
		ps, page, err = e.svc.ListPayments(ctx, payments.PaymentFilter{Start: t0.Add(time.Hour), End: t0.Add(3 * time.Hour)})
		is.NoErr(err)
		is.Equal(len(ps), 3) // l1..l3, inclusive
		is.Equal(page.TotalCount, 3)
		_, _, err = e.svc.ListPayments(ctx, payments.PaymentFilter{Start: t0.Add(time.Hour), End: t0})
		is.Equal(payments.ErrorField(err), "end")
	})
}

func TestService_RemovePayment(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		fund(t, e, 1000)
		mustPayment(t, e.svc, "r1", 100, "ana@example.com")
		p, err := e.svc.RemovePayment(ctx, "r1")
		is.NoErr(err)
		is.Equal(p.Status, payments.PaymentRemoved)
		evs := eventPayloads[movement](t, e.svc, payments.EventMovementRemoved)
		is.Equal(len(evs), 1)
		is.Equal(evs[0].Payment.CorrelationID, "r1") // REMOVED carries the correlationID only
		_, err = e.svc.ApprovePayment(ctx, "r1")
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // a removed payment is not paid
		_, err = e.svc.RemovePayment(ctx, "r1")
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // removed once
		is.Equal(balance(t, e).Total, int64(1000))
		audit(t, e.svc)
	})
}

// TestService_ApprovePayment_Concurrent: 64 goroutines approve 16 payments, 4 times each;
// each pays once and the account, which cannot afford them all, never goes below zero.
func TestService_ApprovePayment_Concurrent(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		fund(t, e, 10000)
		for i := range 16 {
			mustPayment(t, e.svc, fmt.Sprint("c", i), 1000, "ana@example.com")
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := map[string]int{}
		for g := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				corr := fmt.Sprint("c", g%16)
				_, err := e.svc.ApprovePayment(ctx, corr)
				if err == nil {
					mu.Lock()
					ok[corr]++
					mu.Unlock()
				} else if payments.ErrorCode(err) != payments.EPRECONDITION {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		is.Equal(len(ok), 10) // as many as the balance affords
		for _, n := range ok {
			is.Equal(n, 1) // each correlationID pays once
		}
		is.Equal(balance(t, e), payments.Balance{}) // all spent, never below zero
		audit(t, e.svc)
	})
}

// TestService_CreatePayment_BankDown: a Pix key look-up the bank does not answer is an
// unavailable error naming the key's field, not an internal one, and records nothing;
// once the bank answers, the same payment goes through.
func TestService_CreatePayment_BankDown(t *testing.T) {
	t.Parallel()
	eachStoreRail(t, func(t *testing.T, e env, rail *testRail) {
		is := is.New(t)
		fund(t, e, 10000)
		rail.mu.Lock()
		rail.resolveFails = true
		rail.mu.Unlock()
		p := payments.CreatePaymentParams{CorrelationID: "p1", Value: 100, DestinationAlias: "ana@example.com"}
		_, err := e.svc.CreatePayment(ctx, p)
		is.Equal(payments.ErrorCode(err), payments.EUNAVAILABLE)
		is.Equal(payments.ErrorField(err), "destinationAlias")
		is.True(strings.Contains(payments.ErrorMessage(err), "try again"))
		ps, _, err := e.svc.ListPayments(ctx, payments.PaymentFilter{})
		is.NoErr(err)
		is.Equal(len(ps), 0) // nothing recorded

		rail.mu.Lock()
		rail.resolveFails = false
		rail.mu.Unlock()
		_, err = e.svc.CreatePayment(ctx, p)
		is.NoErr(err) // the retry
	})
}

// hangingKeyRail is the sandbox Rail whose Pix key look-ups never answer: they return only
// when their context ends.
type hangingKeyRail struct{ *payments.SandboxRail }

func (hangingKeyRail) ResolveKey(ctx context.Context, _ string, _ brcode.KeyType) (payments.KeyOwner, error) {
	<-ctx.Done()
	return payments.KeyOwner{}, ctx.Err()
}

// A payment's Pix key look-up is bounded by SendTimeout: a bank that never answers is an
// unavailable error naming the key's field, and nothing is recorded.
func TestService_CreatePayment_KeyLookupTimeout(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	rail := hangingKeyRail{payments.NewSandboxRail(nil, 0)}
	svc, err := payments.New(memory.New(), payments.Options{Rail: rail, SendTimeout: time.Nanosecond})
	is.NoErr(err)
	_, err = svc.CreatePayment(ctx, payments.CreatePaymentParams{Value: 500, DestinationAlias: "ana@example.com", DestinationAliasType: "EMAIL", CorrelationID: "p-1"})
	is.Equal(payments.ErrorCode(err), payments.EUNAVAILABLE) // the bank's failure, to try again
	is.Equal(payments.ErrorField(err), "destinationAlias")
	ps, _, err := svc.ListPayments(ctx, payments.PaymentFilter{})
	is.NoErr(err)
	is.Equal(len(ps), 0) // nothing recorded
}
