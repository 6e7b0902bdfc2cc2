package payments

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/matryer/is"
)

// TestEvents_Catalogue: the catalogue's rows say which events keep their real names without
// the vendor prefix (the refund events) and which carry a received Pix whose webhookSent
// audit records their deliveries (the payloads with "pix"); eventOf finds each row by its
// full name, for any vendor, and nothing by a name spelled with the wrong prefix.
func TestEvents_Catalogue(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var bare, withPix []string
	for _, e := range events {
		if e.noPrefix {
			bare = append(bare, e.name)
		}
		if e.pixOf != nil {
			withPix = append(withPix, e.name)
		}
	}
	refunds := []string{EventRefundConfirmed, EventRefundRejected, EventRefundReceivedConfirmed,
		EventPixAutomaticApproved, EventPixAutomaticRejected, EventPixAutomaticCobrCreated, EventPixAutomaticCobrApproved, // and Pix Automático's
		EventPixAutomaticCobrRejected, EventPixAutomaticCobrCompleted, EventPixAutomaticTryRejected, EventPixAutomaticTryRequested}
	paid := []string{EventChargeCompleted, EventChargeNotSamePayer, EventTransactionReceived}
	is.Equal(sorted(bare), sorted(refunds))  // the refund events' real names
	is.Equal(sorted(withPix), sorted(paid))  // the payloads with "pix"
	is.Equal(len(eventsByName), len(events)) // no name twice

	for _, vendor := range []string{DefaultVendor, "woovi"} {
		s := &Service{core: &core{vendor: vendor}}
		for _, e := range events {
			full := s.EventName(e.name)
			got, ok := s.eventOf(full)
			is.True(ok)                // found by its full name
			is.Equal(got.name, e.name) // its own row
			other := "OTHER:" + e.name // a prefix where there is none, or another vendor's
			if e.noPrefix {
				other = "WOOVI:" + e.name
				if vendor == "woovi" {
					other = "OPENPIX:" + e.name
				}
			}
			_, ok = s.eventOf(other)
			is.True(!ok) // not by a name it does not have
		}
		_, ok := s.eventOf(s.EventName("NOT_AN_EVENT"))
		is.True(!ok) // nothing outside the catalogue
	}
}

// TestPayloadPix: payloadPix reads the endToEndId of the Pix of the payloads with "pix",
// and nothing from one whose pix is null.
func TestPayloadPix(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	x := Transaction{EndToEndID: "E00000000202611221200abcdefghijk"}
	for _, payload := range []any{
		chargePaidEvent{Pix: &eventTransaction{Transaction: x}},
		transactionEvent{Pix: &eventTransaction{Transaction: x}},
	} {
		b, err := json.Marshal(payload)
		is.NoErr(err)
		e2e, err := payloadPix(b)
		is.NoErr(err)
		is.Equal(e2e, x.EndToEndID) // the Pix's
	}
	e2e, err := payloadPix([]byte(`{"event":"OPENPIX:TRANSACTION_RECEIVED","pix":null}`))
	is.NoErr(err)
	is.Equal(e2e, "") // no Pix
	_, err = payloadPix([]byte(`{"pix":`))
	is.True(err != nil) // not JSON
}

// sorted is a sorted copy of s.
func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
