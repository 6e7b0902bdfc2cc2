package payments

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/store"
)

const collCharges = "charges"

// collDeletedCharges holds a note (its ChargeRef) of each deleted charge, under the keys
// a Pix finds a charge by.
const collDeletedCharges = "deleted_charges"

// ChargeType decides whether a charge has a due date with fines, interests and discounts.
type ChargeType string

// Charge types.
const (
	ChargeDynamic ChargeType = "DYNAMIC" // one value, payable until it expires
	ChargeOverdue ChargeType = "OVERDUE" // due date, then fines and interests until daysAfterDueDate
)

// ChargeStatus is where a charge stands.
type ChargeStatus string

// Charge statuses.
const (
	ChargeActive    ChargeStatus = "ACTIVE"    // waiting for payment
	ChargeCompleted ChargeStatus = "COMPLETED" // paid
	ChargeExpired   ChargeStatus = "EXPIRED"   // no longer payable
)

// Charge limits and defaults.
const (
	DefaultChargeExpiresIn = 86400            // seconds, as the real API's examples
	MinChargeExpiresIn     = 300              // 5 minutes, the official document's minimum
	MaxChargeExpiresIn     = 10 * 365 * 86400 // 10 years
	MaxComment             = 140
	MaxAdditionalInfo      = 20
)

// Charge is a request for money with a Pix BR Code. Its BR Code is static with the charge's
// txid against the company's Pix key: any bank app can pay it, and the txid (the first 25
// characters of the identifier) ties the payment to the charge. A DYNAMIC charge's code
// carries its value; an OVERDUE charge's code carries no amount, because what is due changes
// with the clock (AmountDue says how much, at the time of the read).
type Charge struct {
	ID             string           `json:"-"`
	Status         ChargeStatus     `json:"status"`
	Type           ChargeType       `json:"type"`
	Value          int64            `json:"value"`
	Comment        string           `json:"comment"`
	CorrelationID  string           `json:"correlationID"`
	Identifier     string           `json:"identifier"`
	TransactionID  string           `json:"transactionID"`
	GlobalID       string           `json:"globalID"`
	PaymentLinkID  string           `json:"paymentLinkID"`
	PaymentLinkURL string           `json:"paymentLinkUrl"` // by the installed Links (SetLinks); "" without
	QRCodeImage    string           `json:"qrCodeImage"`    // by the installed Links (SetLinks); "" without
	BRCode         string           `json:"brCode"`
	PixKey         string           `json:"pixKey"`
	Customer       *Customer        `json:"customer"`
	AdditionalInfo []AdditionalInfo `json:"additionalInfo"`
	ExpiresIn      int64            `json:"expiresIn"`
	ExpiresDate    time.Time        `json:"expiresDate"`
	// Fee is what the platform takes when the charge is paid (the policy applied to the value
	// on reads; the fee actually taken once paid).
	Fee int64 `json:"fee"`

	DaysForDueDate   int               `json:"daysForDueDate,omitempty"`
	DaysAfterDueDate int               `json:"daysAfterDueDate,omitempty"`
	DueDate          *time.Time        `json:"dueDate,omitempty"`
	Interests        *Interests        `json:"interests,omitempty"`
	Fines            *Fines            `json:"fines,omitempty"`
	DiscountSettings *DiscountSettings `json:"discountSettings,omitempty"`

	// Discount, ValueWithDiscount and AmountDue are computed from the clock on every read
	// of an ACTIVE charge; once paid they keep the values of the payment.
	Discount          int64 `json:"discount"`
	ValueWithDiscount int64 `json:"valueWithDiscount"`
	AmountDue         int64 `json:"amountDue"`

	EnableCashbackPercentage          bool    `json:"enableCashbackPercentage,omitempty"`
	EnableCashbackExclusivePercentage bool    `json:"enableCashbackExclusivePercentage,omitempty"`
	Subaccount                        string  `json:"subaccount,omitempty"`
	Splits                            []Split `json:"splits,omitempty"`
	Subscription                      string  `json:"subscription,omitempty"`

	PaidAt    *time.Time `json:"paidAt,omitempty"`
	PaidValue int64      `json:"paidValue,omitempty"`
	// EndToEndID is the id of the Pix that paid the charge.
	EndToEndID string    `json:"endToEndId,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`

	PaymentMethods PaymentMethods `json:"paymentMethods"`
}

// AdditionalInfo is a key/value pair shown to the payer.
type AdditionalInfo struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// PaymentMethods describes how a charge can be paid; only Pix here.
type PaymentMethods struct {
	Pix PixMethod `json:"pix"`
}

// PixMethod is the Pix payment method of a charge, as the real API returns it.
type PixMethod struct {
	Method         string           `json:"method"` // "PIX_COB"
	TransactionID  string           `json:"transactionID"`
	Identifier     string           `json:"identifier"`
	AdditionalInfo []AdditionalInfo `json:"additionalInfo"`
	Fee            int64            `json:"fee"`
	Value          int64            `json:"value"`
	Status         ChargeStatus     `json:"status"`
	TxID           string           `json:"txId"`
	BRCode         string           `json:"brCode"`
	QRCodeImage    string           `json:"qrCodeImage"`
}

// SplitType says where a part of a charge goes.
type SplitType string

// Split types.
const (
	SplitSubAccount       SplitType = "SPLIT_SUB_ACCOUNT"
	SplitInternalTransfer SplitType = "SPLIT_INTERNAL_TRANSFER"
	SplitPartner          SplitType = "SPLIT_PARTNER"
)

// Split sends Value centavos of a paid charge to the subaccount with PixKey.
type Split struct {
	Value     int64     `json:"value"`
	PixKey    string    `json:"pixKey"`
	SplitType SplitType `json:"splitType"`
}

// MaxSplits is the most splits a charge may have. The wire reference gives no limit; 100 is
// far more than a marketplace order needs, and keeps a charge's record and its payment's
// ledger entry small.
const MaxSplits = 100

// CreateChargeParams create a charge. CorrelationID and Value are required.
type CreateChargeParams struct {
	CorrelationID string
	Value         int64 // centavos, > 0
	Type          ChargeType
	// Comment is at most 140 characters. The charge keeps all of it; its BR Code carries
	// as much of it as fits next to the Pix key (folded to ASCII), or none.
	Comment string
	// ExpiresIn (seconds, at least 300, default 86400) or ExpiresDate (an instant; the zero
	// time is not given; kept in UTC to the millisecond) bound a DYNAMIC charge, at most 10
	// years ahead; with both, ExpiresDate wins. OVERDUE charges expire DaysAfterDueDate days
	// after their due day.
	ExpiresIn   int64
	ExpiresDate time.Time
	// Customer is created, or linked when one with the same correlationID or tax ID exists;
	// the charge carries it as sent. A tax ID another customer (of another correlationID)
	// has is ECONFLICT on "customer.taxID".
	Customer *CreateCustomerParams

	// OVERDUE only.
	DaysForDueDate   int
	DaysAfterDueDate int
	Interests        *Interests
	Fines            *Fines
	Discount         *DiscountSettings

	AdditionalInfo                    []AdditionalInfo
	EnableCashbackPercentage          bool
	EnableCashbackExclusivePercentage bool
	Subaccount                        string // Pix key of an existing subaccount that receives the whole charge
	// Splits send parts of the charge to existing subaccounts: at most MaxSplits, adding
	// up to at most Value. Not with Subaccount.
	Splits []Split
	// ReturnExisting makes creation idempotent: an existing charge with the same
	// correlationID is returned instead of a conflict.
	ReturnExisting bool

	subscription string             // set by subscriptions: the subscription's correlationID
	customer     *Customer          // set by subscriptions: the customer as linked already
	ids          *chargeIDs         // drawn before the transaction; nil: drawn in it
	prep         *chargePrep        // work done before the transaction (prepare.go); may be nil
	issued       *rail.IssuedCharge // registered with the bank before the transaction (charges_bank.go)
}

// ChargeFilter selects charges for ListCharges. Zero fields do not filter.
type ChargeFilter struct {
	Start, End   time.Time    // createdAt between Start and End, inclusive
	Status       ChargeStatus // status as a read shows it now: ACTIVE past its expiry is EXPIRED
	Customer     string       // the customer's correlationID
	Subscription string       // the subscription's correlationID
	ListParams
}

// CreateCharge creates a charge with its BR Code.
//
// The charge is built, encoded and its event payload made before the store's write
// transaction, on the caller's goroutine (prepare.go); the transaction uses that work
// only where what it read is what the work was done from.
func (s *Service) CreateCharge(ctx context.Context, p CreateChargeParams) (Charge, error) {
	now := s.now()
	p.ids = s.core.ids.chargeIDs(now)
	if s.core.bank != nil {
		issued, err := s.issueAtBank(ctx, now, p)
		if err != nil {
			return Charge{}, err
		}
		p.issued = issued
	} else {
		p.prep = s.prepareCharge(ctx, now, p)
	}
	var c Charge
	err := s.updateAt(ctx, now, func(t *txn) error {
		var err error
		c, err = t.createCharge(p)
		return err
	})
	return c, err
}

func (t *txn) createCharge(p CreateChargeParams) (Charge, error) {
	corr, err := cleanCorrelationID("correlationID", p.CorrelationID, true)
	if err != nil {
		return Charge{}, err
	}
	if p.ReturnExisting {
		c, err := t.chargeByKey(correlationKey(corr))
		if ok, err := found(err); err != nil || ok {
			return c, err
		}
	}
	c, ok, asRead := t.preparedCharge(p)
	pr := p.prep
	if ok && pr.data != nil && p.Customer == nil && p.issued == nil {
		c = pr.stored // what the steps below make of pr's charge, built with p.customer
	} else {
		pr = nil // built here, or its customer linked here: encoded here
		if !ok {
			if err = t.buildCharge(&c, corr, &p); err != nil {
				return Charge{}, err
			}
		}
		if p.issued != nil {
			if p.issued.TxID != c.TransactionID {
				return Charge{}, internal(fmt.Errorf("the bank registered txid %s for charge %s", p.issued.TxID, c.TransactionID))
			}
			c.BRCode = p.issued.BRCode // the bank's dynamic code
		}
		if p.Customer != nil {
			cust, err := t.linkCustomer(*p.Customer)
			if err != nil {
				return Charge{}, err
			}
			c.Customer = &cust
		}
		if p.customer != nil {
			cust := *p.customer
			c.Customer = &cust
		}
	}
	// Stored without what present derives (links, paymentMethods): reads, far more
	// frequent than creates, decode less.
	if err := t.insertCharge(c, pr); err != nil { // and its payment link
		if ErrorCode(err) == ECONFLICT && ErrorField(err) == "correlationID" {
			return Charge{}, conflict("correlationID", "a charge with correlationID %q already exists", corr)
		}
		return Charge{}, err
	}
	if err := t.addTxidRoute(c.txid()); err != nil { // a bank's Pix finds the company by it (receive_routing.go)
		return Charge{}, err
	}
	if err := t.scheduleExpiry(c.ExpiresDate); err != nil {
		return Charge{}, err
	}
	t.present(&c)
	return c, t.emitChargeCreated(c, pr, asRead)
}

// buildCharge validates p and makes the charge with its identifiers and BR Code in *c
// (filled in place: a Charge is 656 bytes, see encodePrepared).
//
// It is two steps so that the BR Code's encoding, the deepest calls of a create, runs
// below a small frame: with them below checkCharge's, a create outgrew its goroutine's
// first stack (see encodePrepared).
func (t *txn) buildCharge(c *Charge, corr string, p *CreateChargeParams) error {
	if err := t.checkCharge(c, corr, p); err != nil {
		return err
	}
	return t.codeCharge(c, p.ids)
}

// checkCharge validates p and fills *c from it: buildCharge's first step.
func (t *txn) checkCharge(c *Charge, corr string, p *CreateChargeParams) error {
	now := t.now
	if p.Value <= 0 || p.Value > MaxChargeValue {
		return invalid("value", "value must be a positive number of centavos up to %d", int64(MaxChargeValue))
	}
	*c = Charge{
		Status: ChargeActive, Type: p.Type, Value: p.Value, CorrelationID: corr,
		EnableCashbackPercentage:          p.EnableCashbackPercentage,
		EnableCashbackExclusivePercentage: p.EnableCashbackExclusivePercentage,
		Subscription:                      p.subscription,
		CreatedAt:                         now, UpdatedAt: now,
	}
	if c.Type == "" {
		c.Type = ChargeDynamic
	}
	var err error
	if c.Comment, err = cleanString("comment", p.Comment, MaxComment); err != nil {
		return err
	}
	if c.AdditionalInfo, err = cleanAdditionalInfo(p.AdditionalInfo); err != nil {
		return err
	}
	switch c.Type {
	case ChargeDynamic:
		if err := p.checkNoOverdueFields(); err != nil {
			return err
		}
		if c.ExpiresDate, err = expiry(now, p.ExpiresIn, p.ExpiresDate); err != nil {
			return err
		}
	case ChargeOverdue:
		if err := c.setOverdue(now, *p); err != nil {
			return err
		}
	default:
		return invalid("type", "type must be DYNAMIC or OVERDUE")
	}
	c.ExpiresIn = wholeSeconds(now, c.ExpiresDate)
	if p.Subaccount != "" && len(p.Splits) > 0 {
		return invalid("splits", "give subaccount (it receives the whole charge) or splits, not both")
	}
	if p.Subaccount != "" {
		if c.Subaccount, _, err = parsePixKey("subaccount", p.Subaccount, ""); err != nil {
			return err
		}
		if err := t.mustHaveSubaccount("subaccount", c.Subaccount); err != nil {
			return err
		}
	}
	if c.Splits, err = cleanSplits(p.Splits, p.Value); err != nil {
		return err
	}
	for i, sp := range c.Splits {
		if err := t.mustHaveSubaccount(fieldAt("splits", i, "pixKey"), sp.PixKey); err != nil {
			return err
		}
	}
	return nil
}

// codeCharge gives the checked charge c its fee, its identifiers (ids, or drawn now if
// nil) and its BR Code: buildCharge's second step.
func (t *txn) codeCharge(c *Charge, ids *chargeIDs) error {
	co, err := t.loadCompany()
	if err != nil {
		return err
	}
	c.Fee = co.fees().Fee(c.Value)
	if ids == nil {
		ids = t.svc.core.ids.chargeIDs(t.now)
	}
	c.ID = ids.id
	c.GlobalID = base64.StdEncoding.EncodeToString([]byte("Charge:" + c.ID))
	c.TransactionID = ids.transactionID
	c.Identifier = c.TransactionID
	c.PaymentLinkID = ids.paymentLinkID
	c.PixKey = co.PixKey
	static := brcode.Static{Key: co.PixKey, Name: co.MerchantName, City: co.MerchantCity, TxID: c.txid(), Info: c.Comment, TruncateInfo: true}
	if c.Type == ChargeDynamic {
		static.Amount = c.Value
	}
	if c.BRCode, err = brcode.EncodeStatic(static); err != nil {
		return brcodeErr(err)
	}
	return nil
}

// brcodeErr is an encoding failure of a BR Code: every input was validated before (the
// comment is cut to fit), so it is internal.
func brcodeErr(err error) error { return internal(err) }

// txid is the BR Code reference label of the charge: the first 25 characters of its
// identifier, so that a received Pix finds its charge. Every identifier the Service makes
// is longer; a shorter one (a damaged record) is the txid whole rather than a panic in
// every read of the charge.
func (c Charge) txid() string {
	if len(c.Identifier) < 25 {
		return c.Identifier
	}
	return c.Identifier[:25]
}

// expiry computes an expiry time from expiresIn seconds or an expiresDate (the zero time:
// none). With both, expiresDate wins, as in the real API, and expiresIn is not read at all,
// whatever it holds (a client may send a default beside the date; TestService_CreateCharge's
// BothDateWinsOverBadIn). Both have the same bounds: 5 minutes to 10 years from now.
func expiry(now time.Time, expiresIn int64, expiresDate time.Time) (time.Time, error) {
	switch {
	case !expiresDate.IsZero():
		at := expiresDate.UTC().Truncate(time.Millisecond)
		if at.Before(now.Add(MinChargeExpiresIn * time.Second)) {
			return time.Time{}, invalid("expiresDate", "expiresDate must be at least 5 minutes (%d seconds) from now", MinChargeExpiresIn)
		}
		if at.After(now.Add(MaxChargeExpiresIn * time.Second)) {
			return time.Time{}, invalid("expiresDate", "expiresDate must be at most 10 years (%d seconds) from now", MaxChargeExpiresIn)
		}
		return at, nil
	case expiresIn == 0:
		return now.Add(DefaultChargeExpiresIn * time.Second), nil
	case expiresIn < MinChargeExpiresIn || expiresIn > MaxChargeExpiresIn:
		return time.Time{}, invalid("expiresIn", "expiresIn must be between %d (5 minutes) and %d seconds", MinChargeExpiresIn, MaxChargeExpiresIn)
	default:
		return now.Add(time.Duration(expiresIn) * time.Second), nil
	}
}

// wholeSeconds is the number of whole seconds from "from" to "to", exact over any span
// (time.Duration saturates past 292 years).
func wholeSeconds(from, to time.Time) int64 {
	s := to.Unix() - from.Unix()
	if to.Nanosecond() < from.Nanosecond() {
		s--
	}
	return s
}

func cleanAdditionalInfo(in []AdditionalInfo) ([]AdditionalInfo, error) {
	if len(in) > MaxAdditionalInfo {
		return nil, invalid("additionalInfo", "additionalInfo has at most %d items", MaxAdditionalInfo)
	}
	out := make([]AdditionalInfo, 0, len(in))
	for i, ai := range in {
		k, err := cleanString(fieldAt("additionalInfo", i, "key"), ai.Key, 200)
		if err != nil {
			return nil, err
		}
		v, err := cleanString(fieldAt("additionalInfo", i, "value"), ai.Value, 200)
		if err != nil {
			return nil, err
		}
		if k == "" {
			return nil, invalid(fieldAt("additionalInfo", i, "key"), "%s is required", fieldAt("additionalInfo", i, "key"))
		}
		out = append(out, AdditionalInfo{Key: k, Value: v})
	}
	return out, nil
}

func cleanSplits(in []Split, value int64) ([]Split, error) {
	if len(in) > MaxSplits {
		return nil, invalid("splits", "splits has at most %d items, got %d", MaxSplits, len(in))
	}
	var total int64
	out := make([]Split, 0, len(in))
	for i, sp := range in {
		if err := checkCentavos(fieldAt("splits", i, "value"), sp.Value, false); err != nil {
			return nil, err
		}
		key, _, err := parsePixKey(fieldAt("splits", i, "pixKey"), sp.PixKey, "")
		if err != nil {
			return nil, err
		}
		switch sp.SplitType {
		case "":
			sp.SplitType = SplitSubAccount
		case SplitSubAccount, SplitInternalTransfer, SplitPartner:
		default:
			return nil, invalid(fieldAt("splits", i, "splitType"), "%s must be SPLIT_SUB_ACCOUNT, SPLIT_INTERNAL_TRANSFER or SPLIT_PARTNER", fieldAt("splits", i, "splitType"))
		}
		total += sp.Value // at most MaxSplits values of at most MaxChargeValue: no overflow
		out = append(out, Split{Value: sp.Value, PixKey: key, SplitType: sp.SplitType})
	}
	if total > value {
		return nil, invalid("splits", "splits add up to %d, more than the charge value %d", total, value)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func fieldAt(list string, i int, name string) string {
	return list + "[" + strconv.Itoa(i) + "]." + name
}

// keys are the unique keys of a charge. A charge whose transactionID its txid implies
// (every charge made since ids.go's txidCheck) is found by txid through its transactionID
// (txidKeys), without a key of its own; and every charge is found by paymentLinkID
// through the system-space record of the link (chargeByLink), which it needs anyway for
// the public QR image: two keys fewer to check and write per charge.
func (c *Charge) keys() []string {
	keys := []string{
		correlationKey(c.CorrelationID),
		"transactionID:" + c.TransactionID,
	}
	if !txidImplied(c.TransactionID) {
		keys = append(keys, "txid:"+c.txid())
	}
	return keys
}

// Charge index names. Each holds the charges by creation time; "expiry" holds the ACTIVE
// ones by expiry time, for the expiry pass.
const indexExpiry = "expiry"

func (c *Charge) indexes() []store.Index {
	created := sortTime(c.CreatedAt)
	ix := []store.Index{
		{Name: indexAll, Sort: created},
		{Name: "status:" + string(c.Status), Sort: created},
	}
	if c.Customer != nil {
		name := customerIndex(c.Customer.CorrelationID)
		ix = append(ix, store.Index{Name: name, Sort: created}, store.Index{Name: withStatus(name, c.Status), Sort: created})
	}
	if c.Subscription != "" {
		name := subscriptionIndex(c.Subscription)
		ix = append(ix, store.Index{Name: name, Sort: created}, store.Index{Name: withStatus(name, c.Status), Sort: created})
	}
	if c.Status == ChargeActive {
		ix = append(ix, store.Index{Name: indexExpiry, Sort: sortTime(c.ExpiresDate)})
	}
	return ix
}

// customerIndex and subscriptionIndex list the charges of one customer or subscription
// (by its correlationID), and withStatus those of them with one status. The status is
// joined by a control character, which no correlationID may contain: joined by "|", the
// charges of a customer whose correlationID was "a|status:ACTIVE" were listed, whatever
// their status, as customer "a"'s ACTIVE ones (migrationChargeIndex1 renames the entries
// made that way).
func customerIndex(correlationID string) string      { return "customer:" + correlationID }
func subscriptionIndex(correlationID string) string  { return "subscription:" + correlationID }
func withStatus(index string, s ChargeStatus) string { return index + "\x1fstatus:" + string(s) }

// present fills what a charge shows but does not store: its status and amounts now, links
// and the payment-method view.
func (t *txn) present(c *Charge) {
	if c.Status == ChargeActive && !t.now.Before(c.ExpiresDate) {
		c.Status = ChargeExpired
	}
	if c.Status != ChargeCompleted {
		c.Discount, c.AmountDue = c.amountsAt(t.now)
		c.ValueWithDiscount = c.Value - c.Discount
	}
	if c.AdditionalInfo == nil {
		c.AdditionalInfo = []AdditionalInfo{}
	}
	c.PaymentLinkURL, c.QRCodeImage = t.svc.core.linkURLs(c.PaymentLinkID) // see SetLinks
	c.PaymentMethods = PaymentMethods{Pix: PixMethod{
		Method: "PIX_COB", TransactionID: c.TransactionID, Identifier: c.Identifier,
		AdditionalInfo: c.AdditionalInfo, Fee: c.Fee, Value: c.Value, Status: c.Status,
		TxID: c.txid(), BRCode: c.BRCode, QRCodeImage: c.QRCodeImage,
	}}
}

// GetCharge returns the charge with the id, which may be its correlationID, globalID,
// transactionID (identifier), paymentLinkID or txid.
func (s *Service) GetCharge(ctx context.Context, id string) (Charge, error) {
	var c Charge
	err := s.view(ctx, func(t *txn) error {
		var err error
		c, err = t.findCharge(id)
		return err
	})
	return c, err
}

// findCharge finds the charge id names, trying its kinds in GetCharge's order: a
// correlationID first, how a charge is asked for most; then a globalID, known by its form
// with no read, so that a read by globalID does not first miss in the look-ups below; then
// the others.
func (t *txn) findCharge(id string) (Charge, error) {
	c, err := t.chargeByKey(correlationKey(id))
	if ok, err := found(err); err != nil || ok {
		return c, err
	}
	if rid, ok := globalChargeID(id); ok && rid != "" {
		c, err := t.chargeByID(rid)
		if ok, err := found(err); err != nil || ok {
			return c, err
		}
	}
	keys := []string{"transactionID:" + id}
	if len(id) == 25 {
		keys = append(keys, txidKeys(id)...)
	}
	for _, key := range keys {
		c, err := t.chargeByKey(key)
		if ok, err := found(err); err != nil || ok {
			return c, err
		}
	}
	c, err = t.chargeByLink(id)
	if ok, err := found(err); err != nil || ok {
		return c, err
	}
	return Charge{}, notFound("Charge not found")
}

// globalChargeID is the record id of the charge whose globalID is id, if id has a
// globalID's form: the base64 of "Charge:" and the id.
func globalChargeID(id string) (string, bool) {
	raw, err := base64.StdEncoding.DecodeString(id)
	if err != nil {
		return "", false
	}
	return strings.CutPrefix(string(raw), "Charge:")
}

// chargeLinkRecord is the paymentlinks record of the new charge c: its paymentLinkID in
// the system space, with its company and id (see collPaymentLinks), by which the public QR
// image and its company find it.
func (t *txn) chargeLinkRecord(c *Charge) (store.Record, error) {
	return encode(c.PaymentLinkID, paymentLink{Company: t.company, Kind: linkCharge, ID: c.ID}, nil, nil)
}

// chargeByLink returns the charge of this company with the paymentLinkID id, found through
// the link's system-space record; no such charge is not found. A charge made before the
// record had its id (migrateLinks adds it on open) is found by the paymentLinkID key it
// had then.
func (t *txn) chargeByLink(id string) (Charge, error) {
	r, err := t.tx.Get(collPaymentLinks, systemSpace, id)
	if ok, err := found(storeErr(err, "payment link")); err != nil || !ok {
		return Charge{}, cmp.Or(err, error(notFound("Charge not found")))
	}
	var l paymentLink
	if err := decode(r, &l); err != nil {
		return Charge{}, err
	}
	switch {
	case l.Company != t.company || l.Kind != linkCharge:
		return Charge{}, notFound("Charge not found")
	case l.ID == "":
		return t.chargeByKey("paymentLinkID:" + id)
	default:
		return t.chargeByID(l.ID)
	}
}

// migrateLinks gives the paymentlinks record of every charge of every company the
// charge's id, once per database (see migrateOnce): charges made by a version without it
// were found by a paymentLinkID key, which they lose when next saved.
func (s *Service) migrateLinks(ctx context.Context) error {
	return s.migrateOnce(ctx, migrationLinks1, func(co *Service) error { return co.linkCharges(ctx) })
}

// migrateChargeIndexes renames, once per database (see migrateOnce), the index entries that
// list a customer's or subscription's charges by status, from the "|status:" form to
// withStatus's.
func (s *Service) migrateChargeIndexes(ctx context.Context) error {
	return s.migrateOnce(ctx, migrationChargeIndex1, func(co *Service) error {
		return eachBatch(ctx, co, collCharges, indexAll, func(t *txn, id string, c *Charge) error {
			if c.Customer == nil && c.Subscription == "" {
				return nil
			}
			return t.put(collCharges, id, "charge", chargeRecord{c}, c.keys(), c.indexes()) // as stored, renamed
		})
	})
}

// linkCharges sets the charge id in the paymentlinks records of the company's charges
// that lack it, a batch per transaction. It pages by skip through the charges by creation:
// charges made meanwhile come after the page, and have their id already.
func (s *Service) linkCharges(ctx context.Context) error {
	return eachBatch(ctx, s, collCharges, indexAll, func(t *txn, id string, c *Charge) error {
		lr, err := t.tx.Get(collPaymentLinks, systemSpace, c.PaymentLinkID)
		if ok, err := found(storeErr(err, "payment link")); err != nil || !ok {
			return err
		}
		var l paymentLink
		if err := decode(lr, &l); err != nil {
			return err
		}
		if l.Company != t.company || l.Kind != linkCharge || l.ID != "" {
			return nil
		}
		l.ID = id
		nr, err := encode(c.PaymentLinkID, l, nil, nil)
		if err != nil {
			return err
		}
		return storeErr(t.tx.Put(collPaymentLinks, systemSpace, nr), "payment link")
	})
}

func (t *txn) chargeByKey(key string) (Charge, error) {
	var c Charge
	id, err := t.getByKey(collCharges, key, "charge", &c)
	if err != nil {
		return Charge{}, err
	}
	c.ID = id
	t.present(&c)
	return c, nil
}

func (t *txn) chargeByID(id string) (Charge, error) {
	var c Charge
	if err := t.get(collCharges, id, "charge", &c); err != nil {
		return Charge{}, err
	}
	c.ID = id
	t.present(&c)
	return c, nil
}

// saveCharge writes a changed charge back with its indexes, and sets its updatedAt to
// now first, so that what the caller shows next (a transaction, an event) is the charge as
// saved.
func (t *txn) saveCharge(c *Charge) error {
	c.UpdatedAt = t.now
	return t.put(collCharges, c.ID, "charge", chargeRecord{c}, c.keys(), c.indexes())
}

// ListCharges returns charges newest first, with the status a read shows now: a charge past
// its expiry is EXPIRED, for the status filter too, whether or not the periodic pass
// (RunDue) has recorded it yet. It writes nothing.
func (s *Service) ListCharges(ctx context.Context, f ChargeFilter) ([]Charge, PageInfo, error) {
	p, err := f.ListParams.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	switch f.Status {
	case "", ChargeActive, ChargeCompleted, ChargeExpired:
	default:
		return nil, PageInfo{}, invalid("status", "status must be ACTIVE, COMPLETED or EXPIRED")
	}
	if !f.Start.IsZero() && !f.End.IsZero() && f.End.Before(f.Start) { // zero: no bound
		return nil, PageInfo{}, invalid("end", "end must not be before start")
	}
	index := indexAll
	switch {
	case f.Customer != "":
		index = customerIndex(f.Customer)
	case f.Subscription != "":
		index = subscriptionIndex(f.Subscription)
	}
	if f.Status != "" {
		if index == indexAll {
			index = "status:" + string(f.Status)
		} else {
			index = withStatus(index, f.Status)
		}
	}
	if f.Customer != "" && f.Subscription != "" {
		return nil, PageInfo{}, invalid("subscription", "filter by customer or by subscription, not both")
	}
	q := p.query(index)
	if q.From, q.To, err = timeRange(f.Start, f.End, "start"); err != nil {
		return nil, PageInfo{}, err
	}
	var out []Charge
	var total int
	err = s.view(ctx, func(t *txn) error {
		out, total, err = t.listCharges(q, f)
		return err
	})
	return out, p.info(total), err
}

// DeleteCharge deletes an ACTIVE or EXPIRED charge; a paid one stays. A Pix that arrives
// later for a deleted charge is still credited to the company (see ReceivePix). A charge
// the bank registered (Options.BankCharges) is withdrawn there first; if the bank does
// not answer, nothing is deleted (EUNAVAILABLE).
func (s *Service) DeleteCharge(ctx context.Context, id string) error {
	if s.core.bank != nil { // withdrawn at the bank first: a deleted charge cannot be paid
		c, err := s.GetCharge(ctx, id)
		if err != nil {
			return err
		}
		if c.Status != ChargeCompleted {
			if err := s.removeAtBank(ctx, c); err != nil {
				return err
			}
		}
	}
	return s.update(ctx, func(t *txn) error {
		c, err := t.findCharge(id)
		if err != nil {
			return err
		}
		if c.Status == ChargeCompleted {
			return precondition("id", "a paid charge cannot be deleted")
		}
		if err := t.removePaymentLink(c.PaymentLinkID); err != nil {
			return err
		}
		if err := storeErr(t.tx.Delete(collCharges, t.company, c.ID), "charge"); err != nil {
			return err
		}
		// A note under the keys a Pix finds the charge by (not its correlationID, which a new
		// charge may take): see deletedCharge.
		var keys []string
		for _, k := range c.keys() {
			if k != correlationKey(c.CorrelationID) {
				keys = append(keys, k)
			}
		}
		return t.insert(collDeletedCharges, c.ID, "deleted charge", c.ref(), keys, nil)
	})
}

// UpdateChargeExpiry moves when the ACTIVE DYNAMIC charge id (an id DeleteCharge takes)
// expires to expiresDate, read as CreateChargeParams.ExpiresDate is (at least 5 minutes
// and at most 10 years from now; the zero time is EINVALID on "expiresDate"), and returns
// the charge; expiresIn then counts from its creation. An OVERDUE charge's expiry follows
// its due date, and a paid or expired charge has none to move (EPRECONDITION). The BR Code
// does not change: it carries no expiry.
func (s *Service) UpdateChargeExpiry(ctx context.Context, id string, expiresDate time.Time) (Charge, error) {
	var out Charge
	err := s.update(ctx, func(t *txn) error {
		c, err := t.findCharge(id)
		if err != nil {
			return err
		}
		switch {
		case c.Type == ChargeOverdue:
			return precondition("expiresDate", "an OVERDUE charge expires daysAfterDueDate days after its due date")
		case c.Status == ChargeCompleted:
			return precondition("id", "a paid charge does not expire")
		case c.Status != ChargeActive || !t.now.Before(c.ExpiresDate):
			return precondition("id", "the charge has expired")
		case t.svc.atBank(c):
			return precondition("expiresDate", "the charge is registered with the bank, and this version does not move a bank charge's expiry: delete it and create another")
		case expiresDate.IsZero():
			return invalid("expiresDate", "expiresDate is required")
		}
		at, err := expiry(t.now, 0, expiresDate)
		if err != nil {
			return err
		}
		c.ExpiresDate, c.ExpiresIn = at, wholeSeconds(c.CreatedAt, at)
		if err := t.saveCharge(&c); err != nil {
			return err
		}
		if err := t.scheduleExpiry(at); err != nil { // earlier than the company's next: the pass comes sooner
			return err
		}
		t.present(&c)
		out = c
		return nil
	})
	return out, err
}
