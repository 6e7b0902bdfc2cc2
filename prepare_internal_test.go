package payments

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store/bolt"
	"github.com/pixfoundry/payments/store/memory"
	"github.com/pixfoundry/payments/store/storetest"
)

// A charge prepared before its transaction, when the company or the account changed in
// between, is built and reported as the transaction finds them: the prepared work is only
// used for what it was made from.
func TestCreateCharge_StalePreparation(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	for _, st := range []struct {
		name string
		new  func() *Service
	}{
		{"memory", func() *Service { s, err := New(memory.New(), Options{}); is.NoErr(err); return s }},
		{"rerun", func() *Service { s, err := New(storetest.Rerun(memory.New()), Options{}); is.NoErr(err); return s }},
		{"bolt", func() *Service { return newBoltService(t) }}, // checks the reads by their bytes (store.DataComparer)
	} {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			svc := st.new()
			now := svc.now()
			p := CreateChargeParams{CorrelationID: "stale", Value: 1990}
			p.ids = svc.core.ids.chargeIDs(now)
			p.prep = svc.prepareCharge(ctx, now, p)
			is.True(p.prep != nil && p.prep.event != nil) // prepared in full

			name := "Outra Loja"
			_, err := svc.UpdateCompany(ctx, CompanyUpdate{Name: &name, MerchantName: &name})
			is.NoErr(err)
			_, err = svc.ReceivePix(ctx, ReceivePixParams{EndToEndID: "E99999999202611221200STALE0001", Value: 5000})
			is.NoErr(err)

			var c Charge
			err = svc.updateAt(ctx, now, func(t *txn) error {
				var err error
				c, err = t.createCharge(p)
				return err
			})
			is.NoErr(err)
			is.True(strings.Contains(c.BRCode, "Outra Loja")) // the BR Code of the company as it is now
			is.Equal(c.ID, p.ids.id)                          // the ids drawn before

			got, err := svc.GetCharge(ctx, "stale")
			is.NoErr(err)
			is.Equal(got.BRCode, c.BRCode) // stored as returned

			evs, err := svc.Events(ctx, 0, 100)
			is.NoErr(err)
			last := evs[len(evs)-1]
			is.Equal(last.Name, "OPENPIX:CHARGE_CREATED")
			var payload struct {
				Charge  Charge       `json:"charge"`
				Company eventCompany `json:"company"`
				Account Account      `json:"account"`
			}
			is.NoErr(json.Unmarshal(last.Data, &payload))
			is.Equal(payload.Company.Name, "Outra Loja") // the company now
			is.True(payload.Account.Balance.Total > 0)   // the balance after the Pix
			is.Equal(payload.Charge.BRCode, c.BRCode)    // the charge as created
			is.Equal(payload.Charge.PaymentLinkID, p.ids.paymentLinkID)
		})
	}
}

// A prepared charge is used as prepared only at its time and for its parameters.
func TestCreateCharge_PreparationForOtherParams(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	svc, err := New(memory.New(), Options{})
	is.NoErr(err)
	now := svc.now()
	p := CreateChargeParams{CorrelationID: "a", Value: 1990}
	p.ids = svc.core.ids.chargeIDs(now)
	p.prep = svc.prepareCharge(ctx, now, p)
	other := p
	other.Value = 2500 // the preparation was for 1990
	var c Charge
	err = svc.updateAt(ctx, now, func(t *txn) error {
		c, err = t.createCharge(other)
		return err
	})
	is.NoErr(err)
	is.Equal(c.Value, int64(2500))
	got, err := svc.GetCharge(ctx, "a")
	is.NoErr(err)
	is.Equal(got.Value, int64(2500)) // stored as asked
}

// A prepared charge is stored as one built in its transaction: the same keys and index
// entries, and the same paymentlinks record.
func TestCreateCharge_PreparedRecords(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	svc, err := New(memory.New(), Options{})
	is.NoErr(err)
	now := svc.now()
	p := CreateChargeParams{CorrelationID: "prepared", Value: 1990, Comment: "Pedido"}
	p.ids = svc.core.ids.chargeIDs(now)
	p.prep = svc.prepareCharge(ctx, now, p)
	is.True(p.prep != nil && p.prep.data != nil) // prepared in full
	err = svc.updateAt(ctx, now, func(t *txn) error {
		c, err := t.createCharge(p)
		if err != nil {
			return err
		}
		r, err := t.tx.Get(collCharges, t.company, c.ID)
		is.NoErr(err)
		is.Equal(r.Keys, p.prep.stored.keys())       // the keys the charge has
		is.Equal(r.Indexes, p.prep.stored.indexes()) // its index entries
		want, err := t.chargeLinkRecord(&p.prep.stored)
		is.NoErr(err)
		got, err := t.tx.Get(collPaymentLinks, systemSpace, c.PaymentLinkID)
		is.NoErr(err)
		is.Equal(string(got.Data), string(want.Data)) // its link, naming company and charge
		is.True(strings.Contains(string(got.Data), c.ID))
		return nil
	})
	is.NoErr(err)
}

// A charge is prepared from the records the company's last preparation read, without a
// read transaction; when they have since changed, the transaction builds the charge and
// its event from the records as they are, and the next charge is prepared afresh. On
// memory the transaction compares what the records make; on bolt, their bytes.
func TestCreateCharge_PreparedFromLastReads(t *testing.T) {
	t.Parallel()
	for _, st := range []struct {
		name string
		new  func() *Service
	}{
		{"memory", func() *Service { s, err := New(memory.New(), Options{}); is.New(t).NoErr(err); return s }},
		{"bolt", func() *Service { return newBoltService(t) }},
	} {
		t.Run(st.name, func(t *testing.T) {
			is := is.New(t)
			ctx := context.Background()
			svc := st.new()
			_, err := svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: "first", Value: 1990})
			is.NoErr(err)
			is.True(svc.core.reads.get(svc.company) != nil) // its reads kept

			// Prepared from them alone: a cancelled context would end a read transaction.
			done, cancel := context.WithCancel(ctx)
			cancel()
			now := svc.now()
			p := CreateChargeParams{CorrelationID: "replayed", Value: 1990}
			p.ids = svc.core.ids.chargeIDs(now)
			prep := svc.prepareCharge(done, now, p)
			is.True(prep != nil && prep.event != nil)

			name := "Outra Loja"
			_, err = svc.UpdateCompany(ctx, CompanyUpdate{Name: &name, MerchantName: &name})
			is.NoErr(err)
			_, err = svc.ReceivePix(ctx, ReceivePixParams{EndToEndID: "E99999999202611221200READS0001", Value: 5000})
			is.NoErr(err)

			c, err := svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: "second", Value: 1990})
			is.NoErr(err)
			is.True(strings.Contains(c.BRCode, "Outra Loja")) // the company as it is now
			is.True(svc.core.reads.get(svc.company) == nil)   // the stale reads forgotten
			evs, err := svc.Events(ctx, 0, 100)
			is.NoErr(err)
			var payload struct {
				Company eventCompany `json:"company"`
				Account Account      `json:"account"`
			}
			is.NoErr(json.Unmarshal(evs[len(evs)-1].Data, &payload))
			is.Equal(payload.Company.Name, "Outra Loja")
			is.True(payload.Account.Balance.Total > 0) // the balance after the Pix

			c, err = svc.CreateCharge(ctx, CreateChargeParams{CorrelationID: "third", Value: 1990})
			is.NoErr(err)
			is.True(strings.Contains(c.BRCode, "Outra Loja"))
			is.True(svc.core.reads.get(svc.company) != nil) // read afresh and kept
		})
	}
}

// On a store that compares bytes (bolt), the writer takes a preparation as it is when
// every record it was prepared from is as read, and not when one of them changed since:
// the account's books, after a Pix, or the company.
func TestCreateCharge_PreparedReadsChecked(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	svc := newBoltService(t)
	prepare := func(corr string) CreateChargeParams {
		now := svc.now()
		p := CreateChargeParams{CorrelationID: corr, Value: 1990}
		p.ids = svc.core.ids.chargeIDs(now)
		p.prep = svc.prepareCharge(ctx, now, p)
		is.True(p.prep != nil && p.prep.event != nil && len(p.prep.reads) > 0) // prepared in full, its reads known
		return p
	}
	unchanged := func(p CreateChargeParams) (same bool) {
		is.NoErr(svc.updateAt(ctx, p.prep.now, func(t *txn) error { same = t.readsUnchanged(p.prep); return nil }))
		return same
	}
	p := prepare("a")
	is.True(unchanged(p))
	_, err := svc.ReceivePix(ctx, ReceivePixParams{EndToEndID: "E99999999202611221200READS0002", Value: 5000})
	is.NoErr(err)
	is.True(!unchanged(p)) // the books moved
	p = prepare("b")
	is.True(unchanged(p))
	name := "Outra Loja"
	_, err = svc.UpdateCompany(ctx, CompanyUpdate{Name: &name, MerchantName: &name})
	is.NoErr(err)
	is.True(!unchanged(p)) // the company changed
}

// newBoltService is a Service on a bolt file of its own, closed when t ends.
func newBoltService(t *testing.T) *Service {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "payments.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
