package payments

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pixfoundry/payments/internal/wiretime"
)

// A charge made by a subscription records the subscription's correlationID
// (Charge.Subscription), which is what a Go caller filters by and passes to
// GetSubscription. On the wire, the official OpenPix document gives a charge's
// subscription as the Subscription object itself, so the HTTP replies and the events'
// payloads carry the subscription as it is when they are written: its status, value and
// mandate then, not a copy frozen when the charge was made.

// AppendWireJSON appends c as the OpenPix API sends a charge: as AppendJSON writes it,
// but with sub, the subscription that made it (see ChargeSubscriptions), as the
// document's Subscription object in place of its correlationID. A nil sub writes what
// AppendJSON does.
func (c *Charge) AppendWireJSON(b []byte, sub *Subscription) []byte {
	return appendChargeWith(b, c, sub)
}

// ChargeSubscriptions returns the subscriptions that made the charges among cs, by
// correlationID (Charge.Subscription), read in one transaction: what AppendWireJSON
// needs for each. Charges made by no subscription add nothing; a subscription no longer
// found (none is ever deleted) is left out, and its charge keeps the correlationID.
func (s *Service) ChargeSubscriptions(ctx context.Context, cs ...Charge) (map[string]*Subscription, error) {
	var subs map[string]*Subscription
	err := s.view(ctx, func(t *txn) error {
		for i := range cs {
			sub, err := t.chargeSubscription(&cs[i])
			if err != nil {
				return err
			}
			if sub != nil {
				if subs == nil {
					subs = make(map[string]*Subscription)
				}
				subs[cs[i].Subscription] = sub
			}
		}
		return nil
	})
	return subs, err
}

// chargeSubscription is the subscription that made c, as presented, or nil when none did
// (or it is no longer found).
func (t *txn) chargeSubscription(c *Charge) (*Subscription, error) {
	if c.Subscription == "" {
		return nil, nil
	}
	r, err := t.findSubscription(c.Subscription)
	if ok, err := found(err); err != nil || !ok {
		return nil, err
	}
	sub := r.public()
	return &sub, nil
}

// appendSubscription appends sub as JSON, its times as the wire writes them. A
// Subscription always marshals; a failure is a bug, as for encode.
func appendSubscription(b []byte, sub *Subscription) []byte {
	j, err := json.Marshal(sub)
	if err != nil {
		panic(fmt.Sprintf("payments: encode subscription: %v", err))
	}
	return append(b, wiretime.Fix(j)...)
}

// eventCharge is a charge as an event's payload carries it: with the subscription that
// made it as the object (AppendWireJSON).
type eventCharge struct {
	charge *Charge
	sub    *Subscription
}

// MarshalJSON writes the charge as AppendWireJSON does.
func (e *eventCharge) MarshalJSON() ([]byte, error) {
	return appendChargeWith(make([]byte, 0, 1024), e.charge, e.sub), nil
}

// eventCharge is c, as presented, with its subscription read for an event's payload; nil
// for a nil c.
func (t *txn) eventCharge(c *Charge) (*eventCharge, error) {
	if c == nil {
		return nil, nil
	}
	sub, err := t.chargeSubscription(c)
	return &eventCharge{charge: c, sub: sub}, err
}
