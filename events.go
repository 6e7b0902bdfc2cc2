package payments

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/internal/wiretime"
	"github.com/pixfoundry/payments/store"
)

const collEvents = "events"

// Event names, without the vendor prefix. EventName adds it: "OPENPIX:CHARGE_CREATED";
// the refund events' real names have none ("PIX_TRANSACTION_REFUND_SENT_CONFIRMED").
// Each has its row in events, the catalogue.
const (
	EventChargeCreated       = "CHARGE_CREATED"
	EventChargeCompleted     = "CHARGE_COMPLETED"
	EventChargeExpired       = "CHARGE_EXPIRED"
	EventChargeNotSamePayer  = "CHARGE_COMPLETED_NOT_SAME_CUSTOMER_PAYER" // with CHARGE_COMPLETED, when the payer's tax ID is not the customer's
	EventTransactionReceived = "TRANSACTION_RECEIVED"
	EventRefundConfirmed     = "PIX_TRANSACTION_REFUND_SENT_CONFIRMED"
	EventRefundRejected      = "PIX_TRANSACTION_REFUND_SENT_REJECTED"
	// EventRefundReceivedConfirmed: a Pix the company sent came back (RecordPayoutReturn).
	EventRefundReceivedConfirmed = "PIX_TRANSACTION_REFUND_RECEIVED_CONFIRMED"
	// EventTransactionRefundReceived: the same, under the older name the Node and Java SDKs
	// list, in the older shape (transactionRefundEvent).
	EventTransactionRefundReceived = "TRANSACTION_REFUND_RECEIVED"
	EventMovementConfirmed         = "MOVEMENT_CONFIRMED" // an outgoing payment was settled
	EventMovementFailed            = "MOVEMENT_FAILED"    // an outgoing payment failed; its money returned
	EventMovementRemoved           = "MOVEMENT_REMOVED"   // a CREATED payment was removed (RemovePayment)
	EventDisputeCreated            = "DISPUTE_CREATED"    // a MED dispute opened against a received Pix; its value blocked (disputes.go)
	EventDisputeAccepted           = "DISPUTE_ACCEPTED"   // a dispute was decided for the payer: the money goes back
	EventDisputeRejected           = "DISPUTE_REJECTED"   // a dispute was decided for the company: the money released
	EventDisputeCanceled           = "DISPUTE_CANCELED"   // a dispute was withdrawn: the money released
)

// EventType is one event of the catalogue: its name as webhooks carry it and what it
// reports.
type EventType struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// eventSpec is one event some operation emits: all that code outside the emitting noun
// knows of it. EventCatalog, EventName and the webhook audit (auditWebhookSent) read it.
type eventSpec struct {
	name        string // without the vendor prefix
	description string
	noPrefix    bool // its real name has no vendor prefix (the refund events)
	// pixOf reads the endToEndId of the received Pix the payload carries, whose
	// webhookSent audit records each delivery of the event; nil when it carries none.
	pixOf func(data []byte) (string, error)
}

// events is the catalogue, in the order EventCatalog lists it. Adding an event is a row
// here and the code that emits it.
var events = []eventSpec{
	{name: EventChargeCreated, description: "a charge was created"},
	{name: EventChargeCompleted, description: "a charge was paid", pixOf: payloadPix},
	{name: EventChargeExpired, description: "a charge expired unpaid"},
	{name: EventChargeNotSamePayer, description: "a charge was paid by someone whose tax ID is not its customer's (sent with CHARGE_COMPLETED)", pixOf: payloadPix},
	{name: EventTransactionReceived, description: "a Pix was received, for a charge, a static QR code or the account", pixOf: payloadPix},
	{name: EventRefundConfirmed, description: "a refund of a received Pix was confirmed by the bank", noPrefix: true},
	{name: EventRefundRejected, description: "a refund of a received Pix was rejected by the bank; its money returned", noPrefix: true},
	{name: EventRefundReceivedConfirmed, description: "a Pix the company sent (a payment, withdrawal or refund) came back, in whole or in part", noPrefix: true},
	{name: EventTransactionRefundReceived, description: "a Pix the company sent came back, in whole or in part: the older name and shape of PIX_TRANSACTION_REFUND_RECEIVED_CONFIRMED (deprecated by OpenPix, still listed by its SDKs)"},
	{name: EventMovementConfirmed, description: "an outgoing payment was confirmed by the bank"},
	{name: EventMovementFailed, description: "an outgoing payment failed; its money returned"},
	{name: EventMovementRemoved, description: "a payment awaiting approval was removed"},
	{name: EventPixAutomaticApproved, description: "the payer approved a Pix Automático mandate", noPrefix: true},
	{name: EventPixAutomaticRejected, description: "the payer refused or withdrew a Pix Automático mandate; its subscription ended", noPrefix: true},
	{name: EventPixAutomaticCobrCreated, description: "an installment's Pix Automático debit (cobr) was sent to the payer's bank", noPrefix: true},
	{name: EventPixAutomaticCobrApproved, description: "the payer's bank accepted an installment's cobr", noPrefix: true},
	{name: EventPixAutomaticCobrRejected, description: "an installment's cobr was refused with no retry left; the installment was canceled", noPrefix: true},
	{name: EventPixAutomaticCobrCompleted, description: "an installment's cobr was debited and its money received", noPrefix: true},
	{name: EventPixAutomaticTryRejected, description: "the payer's bank refused a try of an installment's cobr", noPrefix: true},
	{name: EventPixAutomaticTryRequested, description: "a retry of an installment's refused cobr was sent", noPrefix: true},
	{name: EventDisputeCreated, description: "a dispute (MED) was opened against a received Pix; its value is blocked"},
	{name: EventDisputeAccepted, description: "a dispute was accepted: the disputed value is returned to the payer"},
	{name: EventDisputeRejected, description: "a dispute was rejected: the disputed value is released to the company"},
	{name: EventDisputeCanceled, description: "a dispute was canceled: the disputed value is released to the company"},
}

// eventsByName is events by name without the vendor prefix.
var eventsByName = func() map[string]eventSpec {
	m := make(map[string]eventSpec, len(events))
	for _, e := range events {
		m[e.name] = e
	}
	return m
}()

// payloadPix is the pixOf of the events whose payload has the Pix at "pix"
// (chargePaidEvent, transactionEvent): "" when it is null.
func payloadPix(data []byte) (string, error) {
	var body struct {
		Pix *struct {
			EndToEndID string `json:"endToEndId"`
		} `json:"pix"`
	}
	if err := gojson.Unmarshal(data, &body); err != nil || body.Pix == nil { // goccy, as decode: every delivery of such an event reads it
		return "", err
	}
	return body.Pix.EndToEndID, nil
}

// EventCatalog returns the events this Service produces, named as its webhooks carry them
// (EventName), each with a one-line description: the list GET /api/v1/webhook/events
// serves, and the names a webhook may subscribe to. It lists only what some operation
// emits: the wire reference's account-register, boleto and
// static-QR events, and PIX_TRANSACTION_REFUND_RECEIVED_REJECTED, have nothing here that
// produces them. The deprecated OPENPIX:TRANSACTION_REFUND_RECEIVED ("refund received or
// refunded") is emitted for money that comes back for a Pix the company sent, beside
// PIX_TRANSACTION_REFUND_RECEIVED_CONFIRMED, because the Node and Java SDKs list it and
// integrators register it; its refunds are the returns of that one order, never the
// refunds of a received Pix, which would make each refund's settlement cost as much as
// the refunds before it. The reference lists no subscription events.
func (s *Service) EventCatalog() []EventType {
	out := make([]EventType, len(events))
	for i, e := range events {
		out[i] = EventType{Name: s.EventName(e.name), Description: e.description}
	}
	return out
}

// Event is one entry of a company's outbox: written in the same transaction as the state
// change it reports, so a committed change always has its event, and numbered so that
// readers (webhook delivery, tests) follow a cursor and miss nothing.
type Event struct {
	Seq  uint64    `json:"seq"`
	Name string    `json:"event"` // with vendor prefix, e.g. "OPENPIX:CHARGE_COMPLETED"
	Time time.Time `json:"time"`
	// Data is the payload, the body a webhook POSTs: a JSON object whose first key is
	// "event", the same name.
	Data json.RawMessage `json:"data"`
}

// EventName returns the full name of an event for this Service's vendor: with the vendor
// prefix, except for the refund and Pix Automático events, whose real names have none.
func (s *Service) EventName(name string) string {
	if eventsByName[name].noPrefix {
		return name
	}
	return strings.ToUpper(s.core.vendor) + ":" + name
}

// eventOf returns the catalogue's row of the event whose full name (EventName) is full.
func (s *Service) eventOf(full string) (eventSpec, bool) {
	name, cut := strings.CutPrefix(full, strings.ToUpper(s.core.vendor)+":")
	e, ok := eventsByName[name]
	return e, ok && cut != e.noPrefix
}

// emit appends an event to the company's outbox in the current transaction.
func (t *txn) emit(name string, payload any) error {
	data, err := marshal(payload)
	if err != nil {
		return fmt.Errorf("encode event %s: %w", name, err)
	}
	return t.emitJSON(name, data)
}

// emitJSON appends an event whose payload is already encoded.
func (t *txn) emitJSON(name string, data []byte) error {
	ev, err := encodeEvent(t.svc.EventName(name), t.now, data)
	if err != nil {
		return err
	}
	return t.emitEncoded(ev)
}

// encodedEvent is an event encoded but for its sequence number, which only the transaction
// that appends it can draw: what emitJSON does outside Next, done once, so that a charge's
// CHARGE_CREATED can be encoded before its transaction (chargePrep.event).
type encodedEvent struct {
	full   string // the full name (EventName)
	buf    []byte // seqRoom bytes of room, then the stored form after {"seq":N (eventTail)
	sortAt []byte // eventTimeSort's part before the sequence number
}

// tail is the stored form after {"seq":N.
func (ev encodedEvent) tail() []byte { return ev.buf[seqRoom:] }

func encodeEvent(full string, at time.Time, data []byte) (encodedEvent, error) {
	buf, err := eventTail(full, at, data)
	if err != nil {
		return encodedEvent{}, err
	}
	return encodedEvent{full: full, buf: buf, sortAt: appendEventTime(nil, at)}, nil
}

// emitEncoded appends ev to the company's outbox, numbered.
func (t *txn) emitEncoded(ev encodedEvent) error {
	seq, err := t.tx.Next(collEvents, t.company, "seq")
	if err != nil {
		return err
	}
	id := seqID(seq)
	b := eventJSON(seq, ev.buf)
	sort := string(appendSeq(append(make([]byte, 0, len(ev.sortAt)+seqDigits), ev.sortAt...), seq))
	ix := []store.Index{{Name: indexAll, Sort: id}, {Name: eventNameIndex(ev.full), Sort: sort}}
	if err := t.tx.Insert(collEvents, t.company, store.Record{ID: id, Data: b, Indexes: ix}); err != nil {
		return err
	}
	return t.wakeWebhooks(ev.full)
}

// eventNameIndex lists the events of one name (full, with the vendor prefix) by time and
// number (eventTimeSort), for ResendWebhookEvents.
func eventNameIndex(name string) string { return "name:" + name }

func eventTimeSort(at time.Time, seq uint64) string {
	return string(appendSeq(appendEventTime(make([]byte, 0, len(sortTimeLayout)+1+seqDigits), at), seq))
}

// appendEventTime appends eventTimeSort's part before the sequence number.
func appendEventTime(b []byte, at time.Time) []byte {
	return append(appendSortTime(b, at), '|')
}

// eventJSON is the stored form of an Event, written out directly: marshalling an Event
// would scan its payload, already valid JSON, a second time. It is {"seq":seq followed by
// the tail buf holds after seqRoom bytes of room (eventTail), which holds the rest.
//
// The head is written into that room and the slice of buf it starts at returned: the tail,
// about 2 KB for a charge's event, is not copied in the writer's transaction. An event is
// appended by one transaction (emitEncoded); a rerun of it writes the room again.
func eventJSON(seq uint64, buf []byte) []byte {
	var d [seqDigits]byte
	digits := strconv.AppendUint(d[:0], seq, 10)
	start := seqRoom - len(`{"seq":`) - len(digits)
	copy(buf[start+copy(buf[start:], `{"seq":`):], digits)
	return buf[start:]
}

// seqRoom is the room an encoded event keeps before its tail for eventJSON's head: {"seq":
// and the largest sequence number.
const seqRoom = len(`{"seq":`) + seqDigits

// eventTail is eventJSON after {"seq":N, after seqRoom bytes of room: the name, the time
// and the payload data. The payload, a JSON object, gets "event": name as its first key, as
// the body a webhook POSTs carries it, and its times three fraction digits (wiretime.Fix),
// as the real API sends them.
func eventTail(name string, at time.Time, data []byte) ([]byte, error) {
	if len(data) < 2 || data[0] != '{' {
		return nil, fmt.Errorf("event %s: the payload is not a JSON object", name)
	}
	qname, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	b := appendEventHead(make([]byte, seqRoom, seqRoom+len(data)+2*len(qname)+70), qname, at)
	if rest := bytes.TrimSpace(data[1:]); len(rest) > 0 && rest[0] != '}' {
		b = append(b, ',')
	}
	b = append(b, wiretime.Fix(data)[1:]...) // times with three fraction digits, as on the wire
	return append(b, '}'), nil
}

// appendEventHead appends eventTail's part before the payload's own keys: the name, the
// time and the payload's opening with "event" (qname is the name, quoted).
func appendEventHead(b, qname []byte, at time.Time) []byte {
	b = append(b, `,"event":`...)
	b = append(b, qname...)
	b = append(b, `,"time":`...)
	b = wiretime.Append(b, at.UTC())
	b = append(b, `,"data":{"event":`...)
	return append(b, qname...)
}

// encodeEventOf is encodeEvent of a payload that writes its own JSON, written straight
// into the event's tail: no buffer of its own, no copy, and no wiretime.Fix pass, which
// would leave it as it is (appendTime writes every time as Fix writes it).
func encodeEventOf(full string, at time.Time, payload jsonAppender) (encodedEvent, error) {
	qname, err := json.Marshal(full)
	if err != nil {
		return encodedEvent{}, err
	}
	b := appendEventHead(make([]byte, seqRoom, seqRoom+2560), qname, at)
	p := len(b)
	b = payload.appendJSON(b)
	if len(b)-p < 2 || b[p] != '{' {
		return encodedEvent{}, fmt.Errorf("event %s: the payload is not a JSON object", full)
	}
	if b[p+1] == '}' {
		b[p], b = '}', b[:p+1] // {}: only "event", then the object's close
	} else {
		b[p] = ',' // the payload's keys after "event"
	}
	return encodedEvent{full: full, buf: append(b, '}'), sortAt: appendEventTime(nil, at)}, nil
}

// seqID formats a sequence number so that bytewise order is numeric order: seqDigits
// digits, zero-padded.
func seqID(n uint64) string { return string(appendSeq(make([]byte, 0, seqDigits), n)) }

// seqDigits is the width of seqID, the digits of the largest uint64.
const seqDigits = 20

// appendSeq appends n as seqID writes it.
func appendSeq(b []byte, n uint64) []byte {
	var d [seqDigits]byte
	for i := len(d) - 1; i >= 0; i-- {
		d[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, d[:]...)
}

// Events returns up to limit (1 to MaxLimit, else EINVALID on "limit") events of the
// company with a sequence number greater than after, oldest first. Start with after = 0
// and pass the last Seq seen to continue. The sequence is per company and only grows, and
// an event becomes visible only after every event with a smaller number has (store.Store's
// Next guarantee): a reader that follows the cursor, even while others write, never skips
// an event and never sees one twice.
func (s *Service) Events(ctx context.Context, after uint64, limit int) ([]Event, error) {
	if limit <= 0 || limit > MaxLimit {
		return nil, invalid("limit", "limit must be between 1 and %d", MaxLimit)
	}
	if after == math.MaxUint64 {
		return nil, nil // nothing is numbered after it (after+1 would start again at 0)
	}
	var out []Event
	err := s.view(ctx, func(t *txn) error {
		var err error
		out, _, err = list[Event](t, collEvents, store.Query{Index: indexAll, From: seqID(after + 1), Limit: limit, NoTotal: true}, nil)
		return err
	})
	return out, err
}

// The payloads, in the shapes of the wire reference (§5.1): every one also carries
// "event" (see eventJSON). The company and account are the company's and its default
// account's (with the balance the change left), as the real API's bodies carry them.

// chargeEvent is the payload of CHARGE_CREATED and CHARGE_EXPIRED.
type chargeEvent struct {
	Charge  Charge        `json:"charge"`
	Company *eventCompany `json:"company"`
	Account *Account      `json:"account"`
	// subscription is the subscription that made Charge, written as its "subscription"
	// (charge_subscription.go); nil for the others.
	subscription *Subscription
}

// chargePaidEvent is the payload of CHARGE_COMPLETED, and of
// CHARGE_COMPLETED_NOT_SAME_CUSTOMER_PAYER, which adds the payer.
type chargePaidEvent struct {
	Charge  *eventCharge      `json:"charge"`
	Pix     *eventTransaction `json:"pix"`
	Company *eventCompany     `json:"company"`
	Account *Account          `json:"account"`
	Payer   *Customer         `json:"payer,omitempty"`
}

// transactionEvent is the payload of TRANSACTION_RECEIVED: charge and pixQrCode are null
// when they do not apply; refunds are the Pix's refunds (its cashback's, if it earned one).
type transactionEvent struct {
	Charge    *eventCharge      `json:"charge"`
	PixQrCode *PixQRCode        `json:"pixQrCode"`
	Pix       *eventTransaction `json:"pix"`
	Company   *eventCompany     `json:"company"`
	Account   *Account          `json:"account"`
	Refunds   []Refund          `json:"refunds"`
}

// refundEvent is the payload of PIX_TRANSACTION_REFUND_SENT_CONFIRMED and _REJECTED: the
// refund as a Pix sent, and the Pix it returns. A rejected one adds error, the bank's
// reason.
type refundEvent struct {
	RefundTransaction   refundTransaction `json:"refundTransaction"`
	OriginalTransaction *eventTransaction `json:"originalTransaction"`
	Company             *eventCompany     `json:"company"`
	Account             *Account          `json:"account"`
	Error               string            `json:"error,omitempty"`
}

// eventCompany is the company as webhooks show it: {id, name, taxID}, the tax ID as a
// plain string ("" when the company has none), as the real payloads carry it.
type eventCompany struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	TaxID string `json:"taxID"`
}

func (c Company) eventRef() *eventCompany {
	e := &eventCompany{ID: c.ID, Name: c.Name}
	if c.TaxID != nil {
		e.TaxID = c.TaxID.TaxID
	}
	return e
}

// eventTransaction is a received Pix as webhooks show it: with its parties.
type eventTransaction struct {
	Transaction
	DebitParty  *PixParty `json:"debitParty"`
	CreditParty *PixParty `json:"creditParty"`
}

// refundTransaction is a refund as webhooks show it: a Pix of type REFUND from the company
// back to the payer. CorrelationID and RefundID (ours) say which refund it is.
type refundTransaction struct {
	Value         int64        `json:"value"`
	Time          time.Time    `json:"time"`
	EndToEndID    string       `json:"endToEndId"`
	Status        RefundStatus `json:"status"`
	Type          string       `json:"type"` // REFUND
	DebitParty    *PixParty    `json:"debitParty"`
	CreditParty   *PixParty    `json:"creditParty"`
	Partial       bool         `json:"partial"` // less than the whole Pix
	GlobalID      string       `json:"globalID"`
	CorrelationID string       `json:"correlationID"`
	RefundID      string       `json:"refundId"`
	CreatedAt     time.Time    `json:"createdAt"`
}

// PixParty is one side of a Pix (debitParty, creditParty) as far as this platform knows
// it: the company's side with its Pix key, name and tax ID; the payer's with the name and
// tax ID the bank reported. The banks' account and PSP details are not known here and are
// left out rather than made up.
type PixParty struct {
	PixKey *PartyPixKey `json:"pixKey,omitempty"`
	Holder PartyHolder  `json:"holder"`
}

// PartyPixKey is a party's Pix key and its type as the wire names it (RANDOM for EVP).
type PartyPixKey struct {
	PixKey string `json:"pixKey"`
	Type   string `json:"type"`
}

// PartyHolder is who holds a party's account.
type PartyHolder struct {
	Name  string `json:"name,omitempty"`
	TaxID *TaxID `json:"taxID,omitempty"`
}

// eventOwner is the company and its default account (with its Pix key and the balance as
// the transaction has left it so far), for an event's payload.
func (t *txn) eventOwner() (Company, *Account, error) {
	co, err := t.loadCompany()
	if err != nil {
		return Company{}, nil, err
	}
	acct, err := t.defaultAccount()
	if err != nil {
		return Company{}, nil, err
	}
	acct.PixKey = co.PixKey
	return co, &acct, nil
}

// emitCharge emits a charge event (CHARGE_CREATED, CHARGE_EXPIRED) with c as presented.
func (t *txn) emitCharge(name string, c Charge) error {
	co, acct, err := t.eventOwner()
	if err != nil {
		return err
	}
	sub, err := t.chargeSubscription(&c)
	if err != nil {
		return err
	}
	return t.emit(name, &chargeEvent{Charge: c, Company: co.eventRef(), Account: acct, subscription: sub})
}

// companyParty is the company's side of its Pix: its key, name and tax ID.
func (co Company) party() *PixParty {
	p := &PixParty{Holder: PartyHolder{Name: co.Name, TaxID: co.TaxID}}
	if typ, key, err := brcode.DetectKey(co.PixKey); err == nil {
		p.PixKey = &PartyPixKey{PixKey: key, Type: wireKeyType(typ)}
	}
	return p
}

// payerParty is the payer's side of a received Pix: nil when the bank reported no payer.
func payerParty(x Transaction) *PixParty {
	if x.Payer == nil {
		return nil
	}
	return &PixParty{Holder: PartyHolder{Name: x.Payer.Name, TaxID: x.Payer.TaxID}}
}

// eventPix is the received Pix x with its parties: from the payer to the company, without
// its webhook audit (Transaction.WebhookSent), which a Pix read back from the store (a
// refund's originalTransaction) carries: an event's payload is the same whatever was
// delivered before it.
func eventPix(co Company, x Transaction) *eventTransaction {
	x.WebhookSent = nil
	return &eventTransaction{Transaction: x, DebitParty: payerParty(x), CreditParty: co.party()}
}

// refundsOf returns the refunds of the Pix with endToEndId e2e, oldest first.
func (t *txn) refundsOf(e2e string) ([]Refund, error) {
	out, _, err := list(t, collRefunds, store.Query{Index: "transaction:" + e2e, Limit: MaxLimit},
		func(r *Refund, id string) { r.RefundID = id })
	if out == nil {
		out = []Refund{}
	}
	return out, err
}

// emitRefund emits the event of a settled refund r of the Pix x: SENT_CONFIRMED or
// SENT_REJECTED. rx is the refund's REFUND transaction, whose globalID the event carries
// (GET /transaction/{globalID} finds it); nil for a refund from before REFUND
// transactions, which carries one made from the refund's id, as it always did.
func (t *txn) emitRefund(r Refund, x Transaction, rx *Transaction) error {
	co, acct, err := t.eventOwner()
	if err != nil {
		return err
	}
	globalID := base64.StdEncoding.EncodeToString([]byte("PixTransaction:" + r.RefundID))
	if rx != nil {
		globalID = rx.GlobalID
	}
	ev := refundEvent{
		RefundTransaction: refundTransaction{
			Value: r.Value, Time: r.Time, EndToEndID: r.EndToEndID, Status: r.Status, Type: string(TransactionRefund),
			DebitParty: co.party(), CreditParty: payerParty(x), Partial: r.Value < x.Value,
			GlobalID: globalID, CorrelationID: r.CorrelationID, RefundID: r.RefundID, CreatedAt: r.CreatedAt,
		},
		OriginalTransaction: eventPix(co, x), Company: co.eventRef(), Account: acct,
	}
	if r.Status == RefundRejected {
		ev.Error = r.Reason
		return t.emit(EventRefundRejected, ev)
	}
	return t.emit(EventRefundConfirmed, ev)
}
