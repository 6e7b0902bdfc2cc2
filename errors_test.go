package payments_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// sameIDs is an id source that always gives the same bytes, so that generated ids collide.
type sameIDs struct{}

func (sameIDs) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// A conflict names the unique field whose value is taken, whichever it is.
func TestService_ConflictField(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			s := st.open(t)
			t.Cleanup(func() { s.Close() })
			svc, err := payments.New(s, payments.Options{Clock: payments.NewManualClock(t0), IDs: sameIDs{}})
			is.NoErr(err)
			_, err = svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "a", Value: 100})
			is.NoErr(err)
			// A second Service on the store, as a second process would be, with the same
			// id bytes: its first transactionID is the first one's (one source never
			// repeats one: they grow).
			other, err := payments.New(s, payments.Options{Clock: payments.NewManualClock(t0), IDs: sameIDs{}})
			is.NoErr(err)
			_, err = other.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "b", Value: 100})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // the generated transactionID is taken
			is.Equal(payments.ErrorField(err), "transactionID")   // and the conflict says so, not correlationID
			is.Equal(payments.ErrorMessage(err), "charge with this transactionID already exists")
			_, err = svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "a", Value: 100})
			is.Equal(payments.ErrorField(err), "correlationID") // a taken correlationID still names it
			is.Equal(payments.ErrorMessage(err), `a charge with correlationID "a" already exists`)

			_, err = svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "A", TaxID: "52998224725", CorrelationID: "ca"})
			is.NoErr(err)
			_, err = svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "B", Email: "b@example.com", CorrelationID: "cb"})
			is.NoErr(err)
			_, err = svc.UpdateCustomer(ctx, "cb", payments.CustomerUpdate{TaxID: new("529.982.247-25")})
			is.Equal(payments.ErrorField(err), "taxID") // the other customer's tax ID
			is.Equal(payments.ErrorMessage(err), "a customer with taxID 52998224725 already exists")
			_, err = svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "C", TaxID: "52998224725", CorrelationID: "cc"})
			is.Equal(payments.ErrorField(err), "taxID") // a new correlationID, a taken tax ID
			_, err = svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "C", Email: "c@example.com", CorrelationID: "cb"})
			is.Equal(payments.ErrorField(err), "correlationID") // a taken correlationID
			is.Equal(payments.ErrorMessage(err), `a customer with correlationID "cb" already exists`)
		})
	}
}

// TestErrors_Sentinels: errors.Is(err, ErrNotFound) and the other code sentinels match the
// Service's errors by code, wrapped or not, whatever their message; a sentinel matches no
// other code, and a foreign error none.
func TestErrors_Sentinels(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, err := payments.New(memory.New(), payments.Options{Clock: payments.NewManualClock(t0)})
	is.NoErr(err)
	_, err = svc.GetCharge(ctx, "nope")
	is.True(errors.Is(err, payments.ErrNotFound))
	is.True(errors.Is(fmt.Errorf("loading the order: %w", err), payments.ErrNotFound)) // wrapped
	is.True(!errors.Is(err, payments.ErrInvalid))
	_, err = svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: -1})
	is.True(errors.Is(err, payments.ErrInvalid))
	is.Equal(payments.ErrorField(err), "value") // still the error it was
	is.True(!errors.Is(errors.New("disk on fire"), payments.ErrInternal))
	is.True(errors.Is(payments.ErrConflict, payments.ErrConflict))
	is.Equal(payments.ErrorCode(payments.ErrUnavailable), payments.EUNAVAILABLE)
}
