package payments

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pixfoundry/payments/store"
)

const collTransactions = "transactions"

// TransactionType says what moved money.
type TransactionType string

// Transaction types.
const (
	TransactionPayment  TransactionType = "PAYMENT"  // a Pix received
	TransactionRefund   TransactionType = "REFUND"   // a Pix sent back to a payer (a refund)
	TransactionWithdraw TransactionType = "WITHDRAW" // money taken out of an account or subaccount
)

// otherTransactionTypes are the real API's transaction types this version records none of
// (its fees are taken from each Pix, transfers and balance blocks are ledger moves, not
// transactions): TransactionFilter.Type accepts them and lists nothing.
var otherTransactionTypes = []TransactionType{"FEE", "INTERNAL_TRANSFER", "BALANCE_BLOCK", "BALANCE_UNBLOCK", "REVERSAL"}

// Transaction is a Pix the company received (or sent back). A received Pix is recorded
// exactly once per endToEndId, whatever happens to the charge it was meant for.
type Transaction struct {
	ID            string          `json:"-"`
	Type          TransactionType `json:"type"`
	Status        string          `json:"status"` // CONFIRMED; a WITHDRAW: CREATED, CONFIRMED or FAILED
	Value         int64           `json:"value"`
	Fee           int64           `json:"fee"`
	Time          time.Time       `json:"time"`
	EndToEndID    string          `json:"endToEndId"`
	TransactionID string          `json:"transactionID"`
	GlobalID      string          `json:"globalID"`
	InfoPagador   string          `json:"infoPagador"`
	PixKey        string          `json:"pixKey,omitempty"` // the key the Pix was sent to
	Payer         *Customer       `json:"payer"`
	Customer      *Customer       `json:"customer"`
	Charge        *ChargeRef      `json:"charge"`
	PixQrCode     *PixQRCodeRef   `json:"pixQrCode"`
	// Withdraw is the withdrawal a WITHDRAW transaction records; nil for every other type.
	Withdraw *WithdrawInfo `json:"withdraw"`
	// RefundID is the refund a REFUND transaction records (its status follows the refund's:
	// IN_PROCESSING, then CONFIRMED with the refund's endToEndId, or REJECTED); "" for every
	// other type. Refunds made before REFUND transactions existed have none.
	RefundID string `json:"refundId,omitempty"`
	// Unmatched says why a Pix meant for a charge did not complete it (the charge was
	// already paid, expired, deleted, or the value differs from the amount due), or why it
	// is not what a static QR code asks (another amount than its fixed value; "QR code
	// deleted"). The money is credited to the company account all the same and can be
	// refunded.
	Unmatched string `json:"unmatched,omitempty"`
	// RefundedValue is how much of the Pix has been sent back so far (refunds in process
	// included); refunds never exceed Value.
	RefundedValue int64 `json:"refundedValue"`
	// Raw is the Pix as the bank reports it, in the real API's callback shape: a received
	// Pix's (PAYMENT); nil, and left out, for the other types, which no bank callback
	// reports.
	Raw       *PixRaw   `json:"raw,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// WebhookSent is the webhook audit of a received Pix, oldest first: one entry each time
	// a webhook's delivery of an event carrying this Pix ended (see WebhookSent). The wire
	// shows [] when there is none; event payloads leave it out.
	WebhookSent []WebhookSent `json:"webhookSent,omitempty"`
}

// WebhookSent is one entry of a transaction's webhook audit, in the wire reference's shape
// {"<EVENT NAME>":{"status","time"},"isRetry"}. An entry is added, in the transaction that
// records the attempt, when a delivery to a webhook of an event that carries the Pix
// (TRANSACTION_RECEIVED, CHARGE_COMPLETED, CHARGE_COMPLETED_NOT_SAME_CUSTOMER_PAYER: the
// events whose payload has "pix") ends: delivered (Status "SUCCESS") or given up after the
// last attempt (Status "FAILED"); and for each manual redelivery (ResendWebhookEvent,
// ResendWebhookEvents), SUCCESS or FAILED. Attempts that will be retried add nothing.
type WebhookSent struct {
	Event  string    // the event's full name, e.g. "OPENPIX:TRANSACTION_RECEIVED"
	Status string    // SUCCESS or FAILED
	Time   time.Time // of the attempt that ended it
	// IsRetry is true when the entry is not the event's first attempt to that webhook:
	// delivered or given up after failures, or a manual redelivery.
	IsRetry bool
}

// Webhook audit statuses.
const (
	WebhookSentSuccess = "SUCCESS"
	WebhookSentFailed  = "FAILED"
)

type webhookSentStatus struct {
	Status string    `json:"status"`
	Time   time.Time `json:"time"`
}

// MarshalJSON writes {"<Event>":{"status","time"},"isRetry"}.
func (w WebhookSent) MarshalJSON() ([]byte, error) {
	ev, err := json.Marshal(w.Event)
	if err != nil {
		return nil, err
	}
	st, err := json.Marshal(webhookSentStatus{Status: w.Status, Time: w.Time})
	if err != nil {
		return nil, err
	}
	b := append([]byte{'{'}, ev...)
	b = append(append(b, ':'), st...)
	return append(b, `,"isRetry":`+strconv.FormatBool(w.IsRetry)+"}"...), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (w *WebhookSent) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*w = WebhookSent{}
	for k, v := range m {
		if k == "isRetry" {
			if err := json.Unmarshal(v, &w.IsRetry); err != nil {
				return err
			}
			continue
		}
		var st webhookSentStatus
		if err := json.Unmarshal(v, &st); err != nil {
			return err
		}
		w.Event, w.Status, w.Time = k, st.Status, st.Time
	}
	return nil
}

// ChargeRef is the charge a transaction belongs to, as transactions and webhooks show it.
type ChargeRef struct {
	Status        ChargeStatus `json:"status"`
	Customer      *Customer    `json:"customer"`
	Value         int64        `json:"value"`
	Comment       string       `json:"comment"`
	CorrelationID string       `json:"correlationID"`
	TransactionID string       `json:"transactionID"`
	GlobalID      string       `json:"globalID"`
	PaymentLinkID string       `json:"paymentLinkID"`
	BRCode        string       `json:"brCode"`
	CreatedAt     time.Time    `json:"createdAt"`
	UpdatedAt     time.Time    `json:"updatedAt"`
}

// PixQRCodeRef is the static QR code a transaction paid.
type PixQRCodeRef struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	CorrelationID string `json:"correlationID"`
	Identifier    string `json:"identifier"`
	Value         int64  `json:"value"`
	BRCode        string `json:"brCode"`
}

// PixRaw is the Pix as the bank reports it: valor is the amount in reais with two
// decimals, formatted from integer centavos.
type PixRaw struct {
	EndToEndID  string    `json:"endToEndId"`
	TxID        string    `json:"txid"`
	Valor       string    `json:"valor"`
	Horario     time.Time `json:"horario"`
	InfoPagador string    `json:"infoPagador"`
}

func (c Charge) ref() *ChargeRef {
	return &ChargeRef{
		Status: c.Status, Customer: c.Customer, Value: c.Value, Comment: c.Comment,
		CorrelationID: c.CorrelationID, TransactionID: c.TransactionID, GlobalID: c.GlobalID,
		PaymentLinkID: c.PaymentLinkID, BRCode: c.BRCode, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
}

func (q PixQRCode) ref() *PixQRCodeRef {
	return &PixQRCodeRef{ID: q.ID, Name: q.Name, CorrelationID: q.CorrelationID, Identifier: q.Identifier, Value: q.Value, BRCode: q.BRCode}
}

// formatReais formats centavos as reais with two decimals ("10.50"), without floats.
func formatReais(centavos int64) string {
	sign := ""
	if centavos < 0 {
		sign, centavos = "-", -centavos
	}
	cents := centavos % 100
	s := strconv.FormatInt(centavos/100, 10) + "."
	if cents < 10 {
		s += "0"
	}
	return sign + s + strconv.FormatInt(cents, 10)
}

// A withdrawal has no endToEndId until the bank gives it one.
func (x Transaction) keys() []string {
	keys := []string{"transactionID:" + x.TransactionID}
	if x.EndToEndID != "" {
		keys = append(keys, "endToEndId:"+x.EndToEndID)
	}
	if x.RefundID != "" {
		keys = append(keys, "refund:"+x.RefundID)
	}
	return keys
}

// Transactions are listed by time; the charge, QR code, withdrawal and type indexes serve
// the filters, alone and combined, in that order ("charge:<transactionID>|type:PAYMENT").
// The hasWebhook filter's entries are the transaction's transactionWebhooks record's.
func (x Transaction) indexes() []store.Index {
	at := sortTime(x.Time)
	typ := "type:" + string(x.Type)
	ix := []store.Index{{Name: indexAll, Sort: at}, {Name: typ, Sort: at}}
	add := func(base string) {
		ix = append(ix,
			store.Index{Name: base, Sort: at},
			store.Index{Name: base + "|" + typ, Sort: at})
	}
	if x.Charge != nil {
		add("charge:" + x.Charge.TransactionID)
	}
	if x.PixQrCode != nil {
		add("pixQrCode:" + x.PixQrCode.Identifier)
	}
	if w := x.Withdraw; w != nil {
		for _, id := range []string{w.ID, w.EndToEndID} {
			if id != "" {
				add("withdrawal:" + id)
			}
		}
	}
	return ix
}

// GetTransaction returns the transaction with the transactionID, endToEndId or globalID id.
func (s *Service) GetTransaction(ctx context.Context, id string) (Transaction, error) {
	var x Transaction
	err := s.view(ctx, func(t *txn) error {
		var err error
		x, err = t.findTransaction(id)
		return err
	})
	return x, err
}

func (t *txn) findTransaction(id string) (Transaction, error) {
	var x Transaction
	rid, err := t.getByKey(collTransactions, "transactionID:"+id, "transaction", &x)
	if ok, err := found(err); err != nil {
		return x, err
	} else if ok {
		x.ID = rid
		return x, t.withWebhookSent(&x)
	}
	x, err = t.transactionByEndToEnd(id)
	if ErrorCode(err) != ENOTFOUND {
		return x, err
	}
	return t.transactionByGlobalID(id, err)
}

// transactionByEndToEnd is the transaction with the endToEndId e2e, and only that: what
// the Service looks a Pix up by itself (a received Pix's retry, the Pix a refund returns).
// findTransaction, for callers' ids, also takes a transactionID or a globalID, which an
// endToEndId sent by a bank must never be mistaken for.
func (t *txn) transactionByEndToEnd(e2e string) (Transaction, error) {
	var x Transaction
	rid, err := t.getByKey(collTransactions, "endToEndId:"+e2e, "transaction", &x)
	if err != nil {
		return Transaction{}, err
	}
	x.ID = rid
	return x, t.withWebhookSent(&x)
}

// transactionByGlobalID is the transaction whose globalID is id (base64 of
// "PixTransaction:<record id>"), or notFound when id is not one.
func (t *txn) transactionByGlobalID(id string, notFound error) (Transaction, error) {
	raw, err := base64.StdEncoding.DecodeString(id)
	if err != nil {
		return Transaction{}, notFound
	}
	rid, ok := strings.CutPrefix(string(raw), "PixTransaction:")
	if !ok || rid == "" {
		return Transaction{}, notFound
	}
	var x Transaction
	if err := t.get(collTransactions, rid, "transaction", &x); err != nil {
		if ErrorCode(err) == ENOTFOUND {
			return Transaction{}, notFound
		}
		return Transaction{}, err
	}
	x.ID = rid
	return x, t.withWebhookSent(&x)
}

// saveTransaction stores x again; its webhook audit is its transactionWebhooks record's,
// not stored with it.
func (t *txn) saveTransaction(x Transaction) error {
	x.WebhookSent = nil
	return t.put(collTransactions, x.ID, "transaction", x, x.keys(), x.indexes())
}

// migrateTransactionIndexes saves every transaction of every company again, once per
// database (see migrateOnce), so that each has the index entries of Transaction.indexes:
// versions before filters combined wrote only the single ones, and their transactions
// were missing from "charge and type", "pixQrCode and type" and the hasWebhook filters.
// It saves them as this version does (splitWebhookSent).
func (s *Service) migrateTransactionIndexes(ctx context.Context) error {
	return s.migrateOnce(ctx, migrationTransactionIndex1, func(co *Service) error {
		return eachBatch(ctx, co, collTransactions, indexAll, func(t *txn, id string, x *Transaction) error {
			_, err := t.splitWebhookSent(id, x)
			return err
		})
	})
}

// TransactionFilter selects transactions for ListTransactions. Zero fields do not filter;
// the others combine: a transaction is listed when it matches all of them (a Pix pays a
// charge or a static QR code, never both, so Charge with PixQrCode lists nothing).
type TransactionFilter struct {
	Start, End time.Time // time between Start and End, inclusive
	// Charge is a charge's id, correlationID or transactionID.
	Charge string
	// PixQrCode is a static QR code's id, correlationID or identifier.
	PixQrCode string
	// Withdrawal is a withdrawal's id or endToEndId: its WITHDRAW transaction.
	Withdrawal string
	// Type is PAYMENT, REFUND or WITHDRAW; the real API's other types (FEE,
	// INTERNAL_TRANSFER, BALANCE_BLOCK, BALANCE_UNBLOCK, REVERSAL) list nothing here.
	Type TransactionType
	// HasWebhook, when set, keeps the transactions with (true) or without (false) a
	// webhookSent entry.
	HasWebhook *bool
	ListParams
}

// ListTransactions returns transactions newest first.
func (s *Service) ListTransactions(ctx context.Context, f TransactionFilter) ([]Transaction, PageInfo, error) {
	p, err := f.ListParams.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	none := slices.Contains(otherTransactionTypes, f.Type)
	switch {
	case f.Type == "", f.Type == TransactionPayment, f.Type == TransactionRefund, f.Type == TransactionWithdraw, none:
	default:
		return nil, PageInfo{}, invalid("type", "type must be PAYMENT, REFUND, WITHDRAW, FEE, INTERNAL_TRANSFER, BALANCE_BLOCK, BALANCE_UNBLOCK or REVERSAL")
	}
	if !f.Start.IsZero() && !f.End.IsZero() && f.End.Before(f.Start) { // zero: no bound
		return nil, PageInfo{}, invalid("end", "end must not be before start")
	}
	n := 0
	for _, v := range []string{f.Charge, f.PixQrCode, f.Withdrawal} {
		if v != "" {
			n++
		}
	}
	if n > 1 || none { // no transaction has two of them, or that type
		return []Transaction{}, p.info(0), nil
	}
	var out []Transaction
	var total int
	err = s.view(ctx, func(t *txn) error {
		index := indexAll
		switch {
		case f.Charge != "":
			c, err := t.findCharge(f.Charge)
			if ok, err := found(err); err != nil {
				return err
			} else if ok {
				index = "charge:" + c.TransactionID
			} else if ref, err := t.deletedChargeByGlobalID(f.Charge); err != nil {
				return err
			} else if ref != nil {
				index = "charge:" + ref.TransactionID // a deleted charge, by its globalID
			} else {
				index = "charge:" + f.Charge // a deleted charge: its transactionID still finds its Pix
			}
		case f.PixQrCode != "":
			q, err := t.findPixQRCode(f.PixQrCode)
			if ok, err := found(err); err != nil {
				return err
			} else if ok {
				index = "pixQrCode:" + q.Identifier
			} else if ref, err := t.deletedQRCode(f.PixQrCode, false); err != nil {
				return err
			} else if ref != nil {
				index = "pixQrCode:" + ref.Identifier // a deleted code, by its id, identifier or correlationID
			} else {
				index = "pixQrCode:" + f.PixQrCode
			}
		case f.Withdrawal != "":
			index = "withdrawal:" + f.Withdrawal
		}
		switch {
		case f.Type == "":
		case index == indexAll:
			index = "type:" + string(f.Type)
		default:
			index += "|type:" + string(f.Type)
		}
		q := p.query(index)
		var err error
		if q.From, q.To, err = timeRange(f.Start, f.End, "start"); err != nil {
			return err
		}
		switch {
		case f.HasWebhook != nil && isSmallIndex(index):
			out, total, err = t.filterByWebhook(index, *f.HasWebhook, q)
			return err
		case f.HasWebhook != nil:
			out, total, err = t.listByWebhook(index, *f.HasWebhook, q)
			return err
		}
		if out, total, err = list(t, collTransactions, q, func(x *Transaction, id string) { x.ID = id }); err != nil {
			return err
		}
		for i := range out {
			if err := t.withWebhookSent(&out[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return out, p.info(total), err
}
