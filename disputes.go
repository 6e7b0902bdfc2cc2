package payments

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pixfoundry/payments/store"
)

const collDisputes = "disputes"

// DisputeStatus is where a dispute stands.
type DisputeStatus string

// Dispute statuses, the official document's names. A dispute opens CREATED; evidence
// from the company moves it to IN_REVIEW; the decision makes it ACCEPTED (the payer wins:
// the money goes back), REJECTED (the company wins: the money is released) or CANCELED
// (the report was withdrawn: released too), once.
const (
	DisputeCreated  DisputeStatus = "CREATED"
	DisputeInReview DisputeStatus = "IN_REVIEW"
	DisputeAccepted DisputeStatus = "ACCEPTED"
	DisputeRejected DisputeStatus = "REJECTED"
	DisputeCanceled DisputeStatus = "CANCELED"
)

// Open reports whether the dispute awaits its decision: the company may still answer it.
func (s DisputeStatus) Open() bool { return s == DisputeCreated || s == DisputeInReview }

// DisputeType is what kind of dispute it is: the document's MED, DISPUTE or CHARGEBACK.
type DisputeType string

// DisputeMED is a dispute under the Central Bank's Mecanismo Especial de Devolução: an
// infraction report (fraud, or an operational failure) against a Pix the company received.
// It is the only kind a Pix receiver meets; the others are card-world names the document
// lists.
const DisputeMED DisputeType = "MED"

// Limits of a dispute's text and evidence.
const (
	MaxDisputeReason       = 500  // characters of a dispute's reason
	MaxEvidenceURL         = 2048 // bytes of an evidence document's URL
	MaxEvidenceDescription = 500  // characters of an evidence document's description
	MaxEvidencePerCall     = 20   // documents one AddDisputeEvidence call may send
	MaxEvidencePerDispute  = 50   // documents a dispute may hold
)

// Dispute is a MED (Mecanismo Especial de Devolução) against one Pix the company received:
// the payer's bank reported an infraction, and the value is blocked in the company's
// account until it is decided.
//
// Opening it blocks the disputed value (available -> blocked, in the default account, the
// account refunds are paid from) in the same transaction that records it, so the account's
// Balance.Blocked shows it. When the account has less available than the value, what there
// is is blocked and BlockedValue says how much, as a receiving PSP blocks what the account
// holds; the rest is not owed later. The company answers with evidence (AddDisputeEvidence)
// while the dispute is open. The decision (DecideDispute) either returns the money to the
// payer, as a refund of the Pix through the company's Rail (a MED devolução: RefundID), or
// releases it (blocked -> available). Each step writes its event (OPENPIX:DISPUTE_CREATED,
// _ACCEPTED, _REJECTED, _CANCELED); evidence has no event in the official document and
// writes none.
//
// A Pix has at most one dispute: opening one again for it returns the first, whatever its
// status, and moves nothing.
type Dispute struct {
	ID     string        `json:"id"`
	Type   DisputeType   `json:"type"`
	Status DisputeStatus `json:"status"`
	// EndToEndID is the disputed Pix's, and finds the dispute as its id does (the official
	// document's GET /dispute/{id} takes it).
	EndToEndID    string `json:"endToEndId"`
	TransactionID string `json:"transactionID"`
	// Value is what is disputed: what remained of the Pix, its refunds deducted, when the
	// dispute opened.
	Value int64 `json:"value"`
	// BlockedValue is how much of Value was blocked when the dispute opened: all of it,
	// or the account's available balance when that was less.
	BlockedValue int64 `json:"blockedValue"`
	// ReturnedValue is how much an ACCEPTED dispute sent back to the payer, through the
	// refund RefundID: BlockedValue, topped up from the available balance up to Value.
	ReturnedValue int64  `json:"returnedValue,omitempty"`
	RefundID      string `json:"refundId,omitempty"`
	// Reason is the reporter's account of the infraction (the document's disputeReason).
	Reason string `json:"disputeReason"`
	// Name is the payer's, as the bank reported the Pix (else the charge's customer's);
	// Email and PhoneNumber are the charge's customer's, when the Pix paid a charge.
	Name        string `json:"name"`
	Email       string `json:"email"`
	PhoneNumber string `json:"phoneNumber"`
	// Documents are the company's evidence, in the order sent.
	Documents []DisputeDocument `json:"documents"`
	AccountID string            `json:"accountId"`
	CreatedAt time.Time         `json:"createdAt"`
	UpdatedAt time.Time         `json:"updatedAt"`
}

// DisputeDocument is one piece of the company's evidence: a link to a document it keeps
// (the official document sends URLs, not files), an optional correlationID of the
// company's, and a description.
type DisputeDocument struct {
	URL           string    `json:"url"`
	CorrelationID string    `json:"correlationID"`
	Description   string    `json:"description"`
	CreatedAt     time.Time `json:"createdAt"`
}

// CreateDisputeParams open a dispute against a received Pix.
type CreateDisputeParams struct {
	// Transaction is the Pix's endToEndId, transactionID or globalID.
	Transaction string
	// Reason is the infraction reported, at most MaxDisputeReason characters; required.
	Reason string
}

// DisputeFilter selects disputes for ListDisputes: created between Start and End,
// inclusive (zero: no bound).
type DisputeFilter struct {
	Start, End time.Time
	ListParams
}

func (d Dispute) keys() []string { return []string{"endToEndId:" + d.EndToEndID} }

// Disputes are listed by creation; the record id, an object id, breaks ties in order.
func (d Dispute) indexes() []store.Index { return []store.Index{byCreation(d.CreatedAt)} }

func (t *txn) saveDispute(d Dispute, insert bool) error {
	if insert {
		return t.insert(collDisputes, d.ID, "dispute", d, d.keys(), d.indexes())
	}
	return t.put(collDisputes, d.ID, "dispute", d, d.keys(), d.indexes())
}

// findDispute is the dispute of the Pix with the endToEndId id, or the dispute with the
// id; "Dispute not found" otherwise.
func (t *txn) findDispute(id string) (Dispute, error) {
	var d Dispute
	if strings.TrimSpace(id) == "" {
		return Dispute{}, notFound("Dispute not found")
	}
	rid, err := t.getByKey(collDisputes, "endToEndId:"+id, "dispute", &d)
	if ok, err := found(err); err != nil || ok {
		d.ID = rid
		return d, err
	}
	err = t.get(collDisputes, id, "dispute", &d)
	d.ID = id
	return d, err
}

// CreateDispute opens a MED dispute against a Pix the company received and blocks its
// value (see Dispute), in one transaction, with its OPENPIX:DISPUTE_CREATED event. A Pix
// that already has a dispute returns that one and moves nothing, so a repeated report, or
// a retried call, never blocks twice. A Pix refunded in full has nothing to dispute.
//
// With a real PSP a dispute arrives from the bank's infraction reports; the apipix driver
// does not fetch them yet, so this is how an embedder (and the sandbox's POST
// /<vendor>/testing/dispute) opens one: in tests, the same path a report would take.
func (s *Service) CreateDispute(ctx context.Context, p CreateDisputeParams) (Dispute, error) {
	reason, err := cleanString("reason", p.Reason, MaxDisputeReason)
	if err != nil {
		return Dispute{}, err
	}
	if reason == "" {
		return Dispute{}, invalid("reason", "reason is required")
	}
	if strings.TrimSpace(p.Transaction) == "" {
		return Dispute{}, invalid("transaction", "transaction is required: the endToEndId or transactionID of a received Pix")
	}
	var d Dispute
	open := func(t *txn) error {
		x, err := t.findTransaction(p.Transaction)
		if ErrorCode(err) == ENOTFOUND {
			return notFound("Transaction %s not found", p.Transaction)
		} else if err != nil {
			return err
		}
		if x.Type != TransactionPayment || x.EndToEndID == "" {
			return precondition("transaction", "only a received Pix can be disputed")
		}
		prev, err := t.findDisputeOf(x.EndToEndID)
		if ok, err := found(err); err != nil || ok {
			d = prev // a repeated report: nothing moves again
			return err
		}
		d, err = t.openDispute(x, reason)
		return err
	}
	err = s.update(ctx, open)
	if ErrorCode(err) == ECONFLICT && ErrorField(err) == "endToEndId" {
		// another call opened the Pix's dispute at the same time: that one is the answer
		err = s.update(ctx, open)
	}
	return result(d, err)
}

// findDisputeOf is the dispute of the Pix with the endToEndId e2e, and only that.
func (t *txn) findDisputeOf(e2e string) (Dispute, error) {
	var d Dispute
	rid, err := t.getByKey(collDisputes, "endToEndId:"+e2e, "dispute", &d)
	d.ID = rid
	return d, err
}

// openDispute records a new dispute of the received Pix x, blocks what it can of its
// value and emits DISPUTE_CREATED.
func (t *txn) openDispute(x Transaction, reason string) (Dispute, error) {
	value := x.Value - x.RefundedValue
	if value <= 0 {
		return Dispute{}, precondition("transaction", "the Pix %s has been refunded in full: there is nothing to dispute", x.EndToEndID)
	}
	acct, err := t.defaultAccount()
	if err != nil {
		return Dispute{}, err
	}
	d := Dispute{
		ID: t.newID(), Type: DisputeMED, Status: DisputeCreated, EndToEndID: x.EndToEndID,
		TransactionID: x.TransactionID, Value: value, BlockedValue: min(value, max(acct.Balance.Available, 0)),
		Reason: reason, Documents: []DisputeDocument{}, AccountID: acct.AccountID, CreatedAt: t.now, UpdatedAt: t.now,
	}
	if x.Payer != nil {
		d.Name = x.Payer.Name
	}
	if c := x.Customer; c != nil {
		if d.Name == "" {
			d.Name = c.Name
		}
		d.Email, d.PhoneNumber = c.Email, c.Phone
	}
	if d.BlockedValue > 0 {
		if _, err := t.hold(acct.AccountID, d.BlockedValue, "dispute.hold", d.ID); err != nil {
			return Dispute{}, err
		}
	}
	if err := t.saveDispute(d, true); err != nil {
		return Dispute{}, err
	}
	return d, t.emitDispute(EventDisputeCreated, d)
}

// GetDispute returns the dispute with the id, or the dispute of the Pix with the
// endToEndId id.
func (s *Service) GetDispute(ctx context.Context, id string) (Dispute, error) {
	var d Dispute
	err := s.view(ctx, func(t *txn) error {
		var err error
		d, err = t.findDispute(id)
		return err
	})
	return result(d, err)
}

// ListDisputes returns the company's disputes, newest first, created between f.Start and
// f.End.
func (s *Service) ListDisputes(ctx context.Context, f DisputeFilter) ([]Dispute, PageInfo, error) {
	p, err := f.ListParams.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	if !f.Start.IsZero() && !f.End.IsZero() && f.End.Before(f.Start) {
		return nil, PageInfo{}, invalid("end", "end must not be before start")
	}
	q := p.query(indexAll)
	if q.From, q.To, err = timeRange(f.Start, f.End, "start"); err != nil {
		return nil, PageInfo{}, err
	}
	var out []Dispute
	var total int
	err = s.view(ctx, func(t *txn) error {
		var err error
		out, total, err = list(t, collDisputes, q, func(d *Dispute, id string) { d.ID = id })
		return err
	})
	if err != nil {
		return nil, PageInfo{}, err
	}
	return out, p.info(total), nil
}

// AddDisputeEvidence adds the company's evidence to an open dispute (by its id or its Pix's
// endToEndId) and moves it to IN_REVIEW, in one transaction; it returns the dispute with
// all its documents. Each document needs an http or https URL; correlationID and
// description are optional. Sending a document again changes nothing: one with the
// correlationID of a document the dispute holds is that document (a conflict on
// correlationID if its URL differs), one without is the document with its URL and
// description. A decided dispute takes no more evidence (EPRECONDITION).
func (s *Service) AddDisputeEvidence(ctx context.Context, id string, docs []DisputeDocument) (Dispute, error) {
	clean, err := cleanEvidence(docs)
	if err != nil {
		return Dispute{}, err
	}
	var d Dispute
	err = s.update(ctx, func(t *txn) error {
		var err error
		if d, err = t.findDispute(id); err != nil {
			return err
		}
		if !d.Status.Open() {
			return precondition("id", "You cannot send evidence for a %s dispute", strings.ToLower(string(d.Status)))
		}
		added := false
		for _, doc := range clean {
			dup, err := d.holds(doc)
			if err != nil {
				return err
			}
			if !dup {
				doc.CreatedAt = t.now
				d.Documents = append(d.Documents, doc)
				added = true
			}
		}
		if len(d.Documents) > MaxEvidencePerDispute {
			return invalid("documents", "a dispute holds at most %d documents", MaxEvidencePerDispute)
		}
		if !added && d.Status == DisputeInReview {
			return nil // a retry: nothing changes
		}
		d.Status, d.UpdatedAt = DisputeInReview, t.now
		return t.saveDispute(d, false)
	})
	return result(d, err)
}

// holds reports whether the dispute already holds doc (see AddDisputeEvidence).
func (d Dispute) holds(doc DisputeDocument) (bool, error) {
	for _, have := range d.Documents {
		switch {
		case doc.CorrelationID != "" && have.CorrelationID == doc.CorrelationID:
			if have.URL != doc.URL {
				return false, conflict("correlationID", "the dispute already holds a document with correlationID %q and another url", doc.CorrelationID)
			}
			return true, nil
		case doc.CorrelationID == "" && have.URL == doc.URL && have.Description == doc.Description:
			return true, nil
		}
	}
	return false, nil
}

// cleanEvidence checks the documents a caller sends, naming documents[i].<field>.
func cleanEvidence(docs []DisputeDocument) ([]DisputeDocument, error) {
	switch {
	case len(docs) == 0:
		return nil, invalid("documents", "documents is required: at least one {url, correlationID, description}")
	case len(docs) > MaxEvidencePerCall:
		return nil, invalid("documents", "at most %d documents per call", MaxEvidencePerCall)
	}
	out := make([]DisputeDocument, len(docs))
	for i, doc := range docs {
		field := func(name string) string { return "documents[" + strconv.Itoa(i) + "]." + name }
		u := strings.TrimSpace(doc.URL)
		if u == "" {
			return nil, invalid(field("url"), "%s is required", field("url"))
		}
		if len(u) > MaxEvidenceURL {
			return nil, invalid(field("url"), "%s must have at most %d bytes", field("url"), MaxEvidenceURL)
		}
		if _, err := checkText(field("url"), u, MaxEvidenceURL); err != nil {
			return nil, err
		}
		parsed, err := url.Parse(u)
		if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return nil, invalid(field("url"), "%s must be an http or https URL", field("url"))
		}
		corr, err := cleanCorrelationID(field("correlationID"), doc.CorrelationID, false)
		if err != nil {
			return nil, err
		}
		desc, err := cleanString(field("description"), doc.Description, MaxEvidenceDescription)
		if err != nil {
			return nil, err
		}
		out[i] = DisputeDocument{URL: u, CorrelationID: corr, Description: desc}
	}
	return out, nil
}

// DecideDispute records the decision on an open dispute (by its id or its Pix's
// endToEndId), in one transaction with its event: ACCEPTED returns the money to the payer,
// REJECTED and CANCELED release it to the company's available balance.
//
// ACCEPTED releases the block and, in the same transaction, refunds the Pix (a refund
// with correlationID "MED:<dispute id>", an outgoing order through the company's Rail, as
// CreateRefund makes; the sandbox settles it at once, and its refund events follow) of the
// dispute's value, or as much of it as the account has available once the block is
// released, and no more than what remains unrefunded of the Pix: a receiving PSP takes
// what the account holds when it returns a MED. Nothing available leaves the dispute
// ACCEPTED with ReturnedValue 0. Whether the bank sent the money is the refund's status: a
// return the bank rejects releases its money to the available balance, as any refund's,
// and the dispute stays ACCEPTED. The order carries no devolução natureza (rail.PixOrder
// has none): rail/apipix asks the PSP for an ORIGINAL one, where the API Pix has
// MED_OPERACIONAL and MED_FRAUDE for a MED.
//
// Deciding a decided dispute again with the same outcome returns it and moves nothing;
// with another outcome it is refused (EPRECONDITION). With a real PSP the decision comes
// from the bank; this is how an embedder, and the sandbox's POST
// /<vendor>/testing/dispute/{id}/decide, make it.
func (s *Service) DecideDispute(ctx context.Context, id string, outcome DisputeStatus) (Dispute, error) {
	switch outcome {
	case DisputeAccepted, DisputeRejected, DisputeCanceled:
	default:
		return Dispute{}, invalid("outcome", "outcome must be ACCEPTED, REJECTED or CANCELED")
	}
	var d Dispute
	err := s.update(ctx, func(t *txn) error {
		var err error
		if d, err = t.findDispute(id); err != nil {
			return err
		}
		switch {
		case d.Status == outcome:
			return nil // decided already: nothing moves again
		case !d.Status.Open():
			return precondition("outcome", "the dispute is already %s", d.Status)
		}
		if d.BlockedValue > 0 {
			if _, err := t.releaseHold(d.AccountID, d.BlockedValue, "dispute.release", d.ID); err != nil {
				return err
			}
		}
		if outcome == DisputeAccepted {
			if err := t.returnDisputed(&d); err != nil {
				return err
			}
		}
		d.Status, d.UpdatedAt = outcome, t.now
		if err := t.saveDispute(d, false); err != nil {
			return err
		}
		return t.emitDispute(disputeEvents[outcome], d)
	})
	return result(d, err)
}

// returnDisputed refunds the Pix of an accepted dispute d, whose block is released (see
// DecideDispute), and records the refund on d.
func (t *txn) returnDisputed(d *Dispute) error {
	x, err := t.transactionByEndToEnd(d.EndToEndID)
	if err != nil {
		return err
	}
	acct, err := t.account(d.AccountID)
	if err != nil {
		return err
	}
	value := min(d.Value, acct.Balance.Available, x.Value-x.RefundedValue)
	if value <= 0 {
		return nil
	}
	comment := "MED: " + cutRunes(d.Reason, MaxComment-len("MED: "))
	r, err := t.createRefund(x, "MED:"+d.ID, value, comment)
	if err != nil {
		return err
	}
	d.ReturnedValue, d.RefundID = r.Value, r.RefundID
	return nil
}

// disputeEvents are the events of the decisions, by outcome.
var disputeEvents = map[DisputeStatus]string{
	DisputeAccepted: EventDisputeAccepted,
	DisputeRejected: EventDisputeRejected,
	DisputeCanceled: EventDisputeCanceled,
}

// disputeEvent is the payload of the dispute events, the official document's
// DisputePayload under "dispute", as the wire reference gives it.
type disputeEvent struct {
	Dispute disputePayload `json:"dispute"`
}

// disputePayload is a dispute as its events show it: value in centavos.
type disputePayload struct {
	Status        DisputeStatus `json:"status"`
	Name          string        `json:"name"`
	Email         string        `json:"email"`
	PhoneNumber   string        `json:"phoneNumber"`
	Value         int64         `json:"value"`
	DisputeReason string        `json:"disputeReason"`
	EndToEndID    string        `json:"endToEndId"`
}

func (t *txn) emitDispute(name string, d Dispute) error {
	return t.emit(name, disputeEvent{Dispute: disputePayload{
		Status: d.Status, Name: d.Name, Email: d.Email, PhoneNumber: d.PhoneNumber, Value: d.Value,
		DisputeReason: d.Reason, EndToEndID: d.EndToEndID,
	}})
}
