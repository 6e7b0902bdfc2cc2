package httpadapter

import (
	"encoding/json"
	"strconv"

	"github.com/pixfoundry/payments"
)

// The charge replies (create, get, list) are the hot path of the API, and encoding/json
// spends most of their encoding time walking payments.Charge by reflection. These
// envelopes write the same bytes directly, the charges through Charge.AppendWireJSON (the
// domain's own encoder, which its tests compare field by field with encoding/json), with
// the subscription that made a charge as the document's object (subs, from
// Service.ChargeSubscriptions). encode uses them for any reply that has an appendJSON
// method; TestChargeJSON_SameAsEncodingJSON compares the envelopes with encoding/json.

// jsonAppender is a reply that writes its own JSON, byte for byte what encoding/json writes.
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

func (r chargeReply) appendJSON(b []byte) []byte {
	b = append(b, `{"charge":`...)
	b = r.Charge.AppendWireJSON(b, r.subs[r.Charge.Subscription])
	return append(b, '}')
}

func (r chargeCreatedReply) appendJSON(b []byte) []byte {
	b = append(b, `{"brCode":`...)
	b = appendJSONString(b, r.BRCode)
	b = append(b, `,"charge":`...)
	b = r.Charge.AppendWireJSON(b, r.subs[r.Charge.Subscription])
	b = append(b, `,"correlationID":`...)
	b = appendJSONString(b, r.CorrelationID)
	return append(b, '}')
}

func (r chargeListReply) appendJSON(b []byte) []byte {
	b = append(b, `{"charges":`...)
	if r.Charges == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Charges {
			if i > 0 {
				b = append(b, ',')
			}
			b = r.Charges[i].AppendWireJSON(b, r.subs[r.Charges[i].Subscription])
		}
		b = append(b, ']')
	}
	b = append(b, `,"pageInfo":`...)
	b = appendPageInfo(b, r.PageInfo)
	return append(b, '}')
}

// wireCharge is a charge inside a reply encoding/json writes: as the charge replies write
// it, with the subscription that made it, if any, as the object.
type wireCharge struct {
	charge payments.Charge
	sub    *payments.Subscription
}

// MarshalJSON writes the charge as Charge.AppendWireJSON does.
func (c wireCharge) MarshalJSON() ([]byte, error) {
	return c.charge.AppendWireJSON(make([]byte, 0, 1024), c.sub), nil
}

func appendPageInfo(b []byte, p payments.PageInfo) []byte {
	b = append(b, `{"skip":`...)
	b = strconv.AppendInt(b, int64(p.Skip), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(p.Limit), 10)
	b = append(b, `,"totalCount":`...)
	b = strconv.AppendInt(b, int64(p.TotalCount), 10)
	b = append(b, `,"hasPreviousPage":`...)
	b = strconv.AppendBool(b, p.HasPreviousPage)
	b = append(b, `,"hasNextPage":`...)
	b = strconv.AppendBool(b, p.HasNextPage)
	return append(b, '}')
}

// appendJSONString appends s as a JSON string, escaped as encoding/json escapes it.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}
