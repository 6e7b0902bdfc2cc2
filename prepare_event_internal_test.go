package payments

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
)

// A charge prepared in full (its record and its CHARGE_CREATED encoded before the
// transaction) is stored byte for byte as one built in its transaction: the charge record
// and the event record, with their keys and index entries. Two Services with the same
// seeded ids and clock create the same charge, one prepared and one not.
func TestCreateCharge_PreparedEventSameAsBuilt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := time.Date(2026, 11, 28, 12, 0, 0, 123456789, time.UTC) // the Service keeps its milliseconds
	type stored struct{ charge, event store.Record }
	create := func(t *testing.T, prepared bool, p CreateChargeParams) stored {
		t.Helper()
		is := is.New(t)
		svc, err := New(memory.New(), Options{Clock: NewManualClock(at), IDs: rand.NewChaCha8([32]byte{7})})
		is.NoErr(err)
		now := svc.now()
		p.ids = svc.core.ids.chargeIDs(now)
		if prepared {
			p.prep = svc.prepareCharge(ctx, now, p)
			is.True(p.prep != nil && p.prep.data != nil && p.prep.event != nil) // prepared in full
		}
		var out stored
		err = svc.updateAt(ctx, now, func(t *txn) error {
			c, err := t.createCharge(p)
			if err != nil {
				return err
			}
			if out.charge, err = t.tx.Get(collCharges, t.company, c.ID); err != nil {
				return err
			}
			page, err := t.tx.List(collEvents, t.company, store.Query{Index: indexAll, Limit: 10})
			if err != nil {
				return err
			}
			is.Equal(len(page.Records), 1) // its CHARGE_CREATED alone
			out.event = page.Records[0]
			return nil
		})
		is.NoErr(err)
		return out
	}
	for _, tc := range []struct {
		name string
		p    CreateChargeParams
	}{
		{"Plain", CreateChargeParams{CorrelationID: "plain", Value: 1990}},
		{"Escapes", CreateChargeParams{CorrelationID: "pedido<1>&\"2\"", Value: 5000, Comment: "Ação \u2028 <b>",
			AdditionalInfo: []AdditionalInfo{{Key: "Produto", Value: "Café & pão"}}}},
		{"ExpiresDateNanoseconds", CreateChargeParams{CorrelationID: "ns", Value: 100, ExpiresDate: at.Add(48*time.Hour + 7)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			built, prepared := create(t, false, tc.p), create(t, true, tc.p)
			is.Equal(string(prepared.charge.Data), string(built.charge.Data)) // the same charge record
			is.Equal(prepared.charge.Keys, built.charge.Keys)                 // the same unique keys
			is.Equal(prepared.charge.Indexes, built.charge.Indexes)           // the same index entries
			is.Equal(prepared.event.ID, built.event.ID)                       // the same sequence number
			is.Equal(string(prepared.event.Data), string(built.event.Data))   // the same event, byte for byte
			is.Equal(prepared.event.Indexes, built.event.Indexes)             // listed by name and time alike
			is.True(len(built.event.Data) > len(built.charge.Data))           // the event carries the charge
		})
	}
}

// eventJSON and eventTail write what encoding an Event writes: the sequence number, the
// full name, the time in milliseconds and the payload with "event" first.
func TestEventJSON_Stored(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	at := time.Date(2026, 11, 28, 12, 0, 0, 123000000, time.FixedZone("BRT", -3*60*60)) // as Service.now keeps it, in another zone
	tail, err := eventTail("OPENPIX:CHARGE_CREATED", at, []byte(`{"charge":{"createdAt":"2026-11-28T12:00:00.1Z"}}`))
	is.NoErr(err)
	is.Equal(string(eventJSON(42, tail)), `{"seq":42,"event":"OPENPIX:CHARGE_CREATED","time":"2026-11-28T15:00:00.123Z",`+
		`"data":{"event":"OPENPIX:CHARGE_CREATED","charge":{"createdAt":"2026-11-28T12:00:00.100Z"}}}`) // the stored form
	tail, err = eventTail("X", at, []byte(`{}`))
	is.NoErr(err)
	is.Equal(string(eventJSON(1, tail)), `{"seq":1,"event":"X","time":"2026-11-28T15:00:00.123Z","data":{"event":"X"}}`)                                 // an empty payload
	is.Equal(string(eventJSON(math.MaxUint64, tail)), `{"seq":18446744073709551615,"event":"X","time":"2026-11-28T15:00:00.123Z","data":{"event":"X"}}`) // the widest number fills the room
	is.Equal(string(eventJSON(7, tail)), `{"seq":7,"event":"X","time":"2026-11-28T15:00:00.123Z","data":{"event":"X"}}`)                                 // written again (a rerun), shorter
	_, err = eventTail("X", at, []byte(`[]`))
	is.True(err != nil) // a payload that is not an object
	ev, err := encodeEvent("X", at, []byte(`{}`))
	is.NoErr(err)
	is.Equal(string(ev.sortAt)+seqID(9), eventTimeSort(at, 9)) // the sort eventTimeSort gives
}

// rawJSON is a payload that appends itself as it is.
type rawJSON string

func (r rawJSON) appendJSON(b []byte) []byte { return append(b, r...) }

// encodeEventOf writes what encodeEvent writes of the same payload already appended,
// without a wiretime.Fix pass: for payloads whose times are as Append writes them.
func TestEncodeEventOf_SameAsEncodeEvent(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 12, 0, 0, 123000000, time.UTC)
	for _, payload := range []string{
		`{}`,
		`{"a":1}`,
		`{"charge":{"value":1,"createdAt":"2026-11-28T12:00:00.120Z","expiresDate":"2026-11-29T12:00:00.123456789-03:00"},"company":null}`,
	} {
		t.Run(payload, func(t *testing.T) {
			is := is.New(t)
			want, err := encodeEvent("OPENPIX:CHARGE_CREATED", at, []byte(payload))
			is.NoErr(err)
			got, err := encodeEventOf("OPENPIX:CHARGE_CREATED", at, rawJSON(payload))
			is.NoErr(err)
			is.Equal(string(got.tail()), string(want.tail())) // the same stored form
			is.Equal(string(got.sortAt), string(want.sortAt)) // the same sort
			is.Equal(got.full, want.full)
		})
	}
	for _, bad := range []string{``, `{`, `[]`, `null`} {
		_, err := encodeEventOf("X", at, rawJSON(bad))
		is.New(t).True(err != nil) // not a JSON object: refused, as by encodeEvent
	}
}
