package payments

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pixfoundry/payments/store"
)

const collEvents = "events"

// Event names, without the vendor prefix. EventName adds it: "OPENPIX:CHARGE_CREATED";
// the refund events' real names have none ("PIX_TRANSACTION_REFUND_SENT_CONFIRMED").
const (
	EventChargeCreated       = "CHARGE_CREATED"
	EventChargeCompleted     = "CHARGE_COMPLETED"
	EventChargeExpired       = "CHARGE_EXPIRED"
	EventTransactionReceived = "TRANSACTION_RECEIVED"
	EventRefundConfirmed     = "PIX_TRANSACTION_REFUND_SENT_CONFIRMED"
	EventRefundRejected      = "PIX_TRANSACTION_REFUND_SENT_REJECTED"
	EventMovementConfirmed   = "MOVEMENT_CONFIRMED" // an outgoing payment was settled
	EventMovementFailed      = "MOVEMENT_FAILED"    // an outgoing payment failed; its money returned
	EventMovementRemoved     = "MOVEMENT_REMOVED"   // a CREATED payment was removed (RemovePayment)
)

// Event is one entry of a company's outbox: written in the same transaction as the state
// change it reports, so a committed change always has its event, and numbered so that
// readers (webhook delivery, tests) follow a cursor and miss nothing.
type Event struct {
	Seq  uint64          `json:"seq"`
	Name string          `json:"event"` // with vendor prefix, e.g. "OPENPIX:CHARGE_COMPLETED"
	Time time.Time       `json:"time"`
	Data json.RawMessage `json:"data"` // the payload, as a webhook would carry it
}

// EventName returns the full name of an event for this Service's vendor: with the vendor
// prefix, except for the refund events, whose real names have none.
func (s *Service) EventName(name string) string {
	switch name {
	case EventRefundConfirmed, EventRefundRejected:
		return name
	}
	return strings.ToUpper(s.core.vendor) + ":" + name
}

// emit appends an event to the company's outbox in the current transaction.
func (t *txn) emit(name string, payload any) error {
	data, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("encode event %s: %w", name, err)
	}
	return t.emitJSON(name, data)
}

// emitJSON appends an event whose payload is already encoded.
func (t *txn) emitJSON(name string, data []byte) error {
	seq, err := t.tx.Next(collEvents, t.company, "seq")
	if err != nil {
		return err
	}
	id := seqID(seq)
	b, err := eventJSON(seq, t.svc.EventName(name), t.now, data)
	if err != nil {
		return err
	}
	return t.tx.Insert(collEvents, t.company, store.Record{ID: id, Data: b, Indexes: []store.Index{{Name: indexAll, Sort: id}}})
}

// eventJSON is the stored form of an Event, written out directly: marshalling an Event
// would scan data, already valid JSON, a second time.
func eventJSON(seq uint64, name string, at time.Time, data []byte) ([]byte, error) {
	qname, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(data)+len(qname)+80)
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"event":`...)
	b = append(b, qname...)
	b = append(b, `,"time":"`...)
	b = at.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","data":`...)
	b = append(b, data...)
	return append(b, '}'), nil
}

// seqID formats a sequence number so that bytewise order is numeric order.
func seqID(n uint64) string { return fmt.Sprintf("%020d", n) }

// Events returns up to limit events with a sequence number greater than after, oldest
// first. Start with after = 0 and pass the last Seq seen to continue.
func (s *Service) Events(ctx context.Context, after uint64, limit int) ([]Event, error) {
	if limit <= 0 || limit > MaxLimit {
		return nil, invalid("limit", "limit must be between 1 and %d", MaxLimit)
	}
	var out []Event
	err := s.view(ctx, func(t *txn) error {
		var err error
		out, _, err = list[Event](t, collEvents, store.Query{Index: indexAll, From: seqID(after + 1), Limit: limit}, nil)
		return err
	})
	return out, err
}
