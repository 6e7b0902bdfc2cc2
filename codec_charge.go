package payments

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/pixfoundry/payments/internal/wiretime"
)

// The charge codec's encoding half. Every charge written (created, paid, expired) is
// encoded, and so is its event's payload, and encoding/json spends most of that time
// walking Charge by reflection. These functions write the same bytes directly: the fields
// of Charge and of what it holds, in the order and with the names and omitempty/omitzero
// rules of their json tags, times as the wire wants them (three fraction digits, as
// wiretime.Fix makes encoding/json's). httpadapter's charge replies use it too (Charge.AppendJSON).
// A charge's record is written the same way without the fields present derives on every
// read (appendChargeRecord), so records written before and after read alike and nothing
// needs a migration. TestChargeJSON_SameAsEncodingJSON
// (codec_charge_internal_test.go) fills every field by reflection and compares with
// encoding/json's bytes through wiretime.Fix, so a field added to Charge and not here fails it. Decoding stays with
// go-json (codec.go).

func (c Charge) appendJSON(b []byte) []byte { return appendCharge(b, &c) }

// AppendJSON appends c as JSON to b: the bytes encoding/json writes for a Charge, written
// without reflection. httpadapter's charge replies use it.
func (c *Charge) AppendJSON(b []byte) []byte { return appendCharge(b, c) }

func (e *chargeEvent) appendJSON(b []byte) []byte {
	b = append(b, `{"charge":`...)
	b = appendChargeWith(b, &e.Charge, e.subscription)
	b = append(b, `,"company":`...)
	if c := e.Company; c == nil {
		b = append(b, "null"...)
	} else {
		b = appendStringField(b, '{', "id", c.ID)
		b = appendStringField(b, ',', "name", c.Name)
		b = appendStringField(b, ',', "taxID", c.TaxID)
		b = append(b, '}')
	}
	b = append(b, `,"account":`...)
	if a := e.Account; a == nil {
		b = append(b, "null"...)
	} else {
		b = appendStringField(b, '{', "accountId", a.AccountID)
		b = append(b, `,"isDefault":`...)
		b = strconv.AppendBool(b, a.IsDefault)
		b = appendStringField(b, ',', "pixKey", a.PixKey)
		if a.Name != "" {
			b = appendStringField(b, ',', "accountName", a.Name)
		}
		b = append(b, `,"balance":{"total":`...)
		b = strconv.AppendInt(b, a.Balance.Total, 10)
		b = appendIntField(b, "blocked", a.Balance.Blocked)
		b = appendIntField(b, "available", a.Balance.Available)
		b = append(b, `},"createdAt":`...)
		b = appendTime(b, a.CreatedAt)
		if a.ClosedAt != nil {
			b = append(b, `,"closedAt":`...)
			b = appendTime(b, *a.ClosedAt)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendCharge writes c as encoding/json does.
func appendCharge(b []byte, c *Charge) []byte { return appendChargeWith(b, c, nil) }

// chargeRecord is a charge as its record keeps it (appendChargeRecord): what
// insertCharge, saveCharge and the migrations store.
type chargeRecord struct{ c *Charge }

func (r chargeRecord) appendJSON(b []byte) []byte { return appendChargeRecord(b, r.c) }

// appendChargeRecord writes c as its record keeps it: as appendCharge, without the
// fields present derives from the others on every read (paymentLinkUrl and qrCodeImage
// from paymentLinkID; paymentMethods, a copy of the charge's own Pix fields), which
// decode to their zero values. The bench load script's charge is stored in 973 bytes with
// its keys and indexes instead of 1,175 (the three fields were empty), and a paid charge's
// JSON in 883 bytes instead of 1,370 (saved after reading, it kept a presented copy of
// paymentMethods, its status stale). Records written with them, before, read the same:
// present overwrites them.
func appendChargeRecord(b []byte, c *Charge) []byte { return appendChargeAs(b, c, nil, true) }

// appendChargeWith is appendCharge with the subscription that made c, when sub is not nil,
// as the object in place of its correlationID (AppendWireJSON).
func appendChargeWith(b []byte, c *Charge, sub *Subscription) []byte {
	return appendChargeAs(b, c, sub, false)
}

// appendChargeAs is appendChargeWith, or appendChargeRecord when record is set.
func appendChargeAs(b []byte, c *Charge, sub *Subscription, record bool) []byte {
	b = appendStringField(b, '{', "status", string(c.Status))
	b = appendStringField(b, ',', "type", string(c.Type))
	b = appendIntField(b, "value", c.Value)
	b = appendStringField(b, ',', "comment", c.Comment)
	b = appendStringField(b, ',', "correlationID", c.CorrelationID)
	b = appendStringField(b, ',', "identifier", c.Identifier)
	b = appendStringField(b, ',', "transactionID", c.TransactionID)
	b = appendStringField(b, ',', "globalID", c.GlobalID)
	b = appendStringField(b, ',', "paymentLinkID", c.PaymentLinkID)
	if !record {
		b = appendStringField(b, ',', "paymentLinkUrl", c.PaymentLinkURL)
		b = appendStringField(b, ',', "qrCodeImage", c.QRCodeImage)
	}
	b = appendStringField(b, ',', "brCode", c.BRCode)
	b = appendStringField(b, ',', "pixKey", c.PixKey)
	b = append(b, `,"customer":`...)
	b = appendCustomer(b, c.Customer)
	b = append(b, `,"additionalInfo":`...)
	b = appendAdditionalInfo(b, c.AdditionalInfo)
	b = appendIntField(b, "expiresIn", c.ExpiresIn)
	b = append(b, `,"expiresDate":`...)
	b = appendTime(b, c.ExpiresDate)
	b = appendIntField(b, "fee", c.Fee)
	if c.DaysForDueDate != 0 {
		b = appendIntField(b, "daysForDueDate", int64(c.DaysForDueDate))
	}
	if c.DaysAfterDueDate != 0 {
		b = appendIntField(b, "daysAfterDueDate", int64(c.DaysAfterDueDate))
	}
	if c.DueDate != nil {
		b = append(b, `,"dueDate":`...)
		b = appendTime(b, *c.DueDate)
	}
	if c.Interests != nil {
		b = append(b, `,"interests":{"value":`...)
		b = strconv.AppendInt(b, c.Interests.Value, 10)
		if c.Interests.Type != "" {
			b = appendStringField(b, ',', "type", string(c.Interests.Type))
		}
		b = append(b, '}')
	}
	if c.Fines != nil {
		b = append(b, `,"fines":{"value":`...)
		b = strconv.AppendInt(b, c.Fines.Value, 10)
		b = appendStringField(b, ',', "type", string(c.Fines.Type))
		b = append(b, '}')
	}
	if d := c.DiscountSettings; d != nil {
		b = append(b, `,"discountSettings":`...)
		b = appendStringField(b, '{', "modality", string(d.Modality))
		if len(d.DiscountFixedDate) > 0 {
			b = append(b, `,"discountFixedDate":[`...)
			for i, t := range d.DiscountFixedDate {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"daysActive":`...)
				b = strconv.AppendInt(b, int64(t.DaysActive), 10)
				b = appendIntField(b, "value", t.Value)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		if d.Value != 0 {
			b = appendIntField(b, "value", d.Value)
		}
		b = append(b, '}')
	}
	b = appendIntField(b, "discount", c.Discount)
	b = appendIntField(b, "valueWithDiscount", c.ValueWithDiscount)
	b = appendIntField(b, "amountDue", c.AmountDue)
	if c.EnableCashbackPercentage {
		b = append(b, `,"enableCashbackPercentage":true`...)
	}
	if c.EnableCashbackExclusivePercentage {
		b = append(b, `,"enableCashbackExclusivePercentage":true`...)
	}
	if c.Subaccount != "" {
		b = appendStringField(b, ',', "subaccount", c.Subaccount)
	}
	if len(c.Splits) > 0 {
		b = append(b, `,"splits":[`...)
		for i, s := range c.Splits {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"value":`...)
			b = strconv.AppendInt(b, s.Value, 10)
			b = appendStringField(b, ',', "pixKey", s.PixKey)
			b = appendStringField(b, ',', "splitType", string(s.SplitType))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if sub != nil {
		b = append(b, `,"subscription":`...)
		b = appendSubscription(b, sub)
	} else if c.Subscription != "" {
		b = appendStringField(b, ',', "subscription", c.Subscription)
	}
	if c.PaidAt != nil {
		b = append(b, `,"paidAt":`...)
		b = appendTime(b, *c.PaidAt)
	}
	if c.PaidValue != 0 {
		b = appendIntField(b, "paidValue", c.PaidValue)
	}
	if c.EndToEndID != "" {
		b = appendStringField(b, ',', "endToEndId", c.EndToEndID)
	}
	b = append(b, `,"createdAt":`...)
	b = appendTime(b, c.CreatedAt)
	b = append(b, `,"updatedAt":`...)
	b = appendTime(b, c.UpdatedAt)
	if record {
		return append(b, '}')
	}
	p := &c.PaymentMethods.Pix
	b = append(b, `,"paymentMethods":{"pix":`...)
	b = appendStringField(b, '{', "method", p.Method)
	b = appendStringField(b, ',', "transactionID", p.TransactionID)
	b = appendStringField(b, ',', "identifier", p.Identifier)
	b = append(b, `,"additionalInfo":`...)
	b = appendAdditionalInfo(b, p.AdditionalInfo)
	b = appendIntField(b, "fee", p.Fee)
	b = appendIntField(b, "value", p.Value)
	b = appendStringField(b, ',', "status", string(p.Status))
	b = appendStringField(b, ',', "txId", p.TxID)
	b = appendStringField(b, ',', "brCode", p.BRCode)
	b = appendStringField(b, ',', "qrCodeImage", p.QRCodeImage)
	return append(b, "}}}"...)
}

func appendCustomer(b []byte, c *Customer) []byte {
	if c == nil {
		return append(b, "null"...)
	}
	b = appendStringField(b, '{', "name", c.Name)
	b = appendStringField(b, ',', "email", c.Email)
	b = appendStringField(b, ',', "phone", c.Phone)
	if c.TaxID == nil {
		b = append(b, `,"taxID":null`...)
	} else {
		b = append(b, `,"taxID":`...)
		b = appendStringField(b, '{', "taxID", c.TaxID.TaxID)
		b = appendStringField(b, ',', "type", string(c.TaxID.Type))
		b = append(b, '}')
	}
	b = appendStringField(b, ',', "correlationID", c.CorrelationID)
	if a := c.Address; a != nil {
		b = append(b, `,"address":`...)
		sep := byte('{')
		for _, f := range [...]struct{ name, v string }{
			{"zipcode", a.Zipcode}, {"street", a.Street}, {"number", a.Number}, {"neighborhood", a.Neighborhood},
			{"city", a.City}, {"state", a.State}, {"complement", a.Complement}, {"country", a.Country},
		} {
			if f.v != "" {
				b = appendStringField(b, sep, f.name, f.v)
				sep = ','
			}
		}
		if sep == '{' {
			b = append(b, '{')
		}
		b = append(b, '}')
	}
	if !c.CreatedAt.IsZero() {
		b = append(b, `,"createdAt":`...)
		b = appendTime(b, c.CreatedAt)
	}
	if !c.UpdatedAt.IsZero() {
		b = append(b, `,"updatedAt":`...)
		b = appendTime(b, c.UpdatedAt)
	}
	return append(b, '}')
}

func appendAdditionalInfo(b []byte, infos []AdditionalInfo) []byte {
	if infos == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, a := range infos {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendStringField(b, '{', "key", a.Key)
		b = appendStringField(b, ',', "value", a.Value)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendStringField writes sep, "name": and s. name is one of ours: plain ASCII.
func appendStringField(b []byte, sep byte, name, s string) []byte {
	b = append(b, sep, '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, s)
}

// appendIntField writes ,"name":n.
func appendIntField(b []byte, name string, n int64) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, n, 10)
}

// appendString writes s as a JSON string. Printable ASCII other than the characters
// encoding/json escapes (", \ and, for HTML, <, > and &) is copied; any other string is
// left to encoding/json, so that every escape is exactly its own.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainJSONByte[s[i]] {
			j, _ := json.Marshal(s) // a string always encodes
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainJSONByte marks the bytes appendString copies as they are.
var plainJSONByte = func() (t [256]bool) {
	for c := 0x20; c <= 0x7e; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendTime writes t as the wire wants it (wiretime.Append): RFC 3339 with three fraction
// digits at millisecond precision, all its digits otherwise. The times time.Time's
// MarshalJSON cannot write (a year outside 0-9999, a zone offset of a day or more) are an
// error there, and a bug here, as for encode.
func appendTime(b []byte, t time.Time) []byte {
	if _, off := t.Zone(); t.Year() < 0 || t.Year() > 9999 || off <= -24*60*60 || off >= 24*60*60 {
		j, err := t.MarshalJSON()
		if err != nil {
			panic(fmt.Sprintf("payments: encode time: %v", err))
		}
		return append(b, j...)
	}
	return wiretime.Append(b, t)
}
