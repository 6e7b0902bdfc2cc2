package payments

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/pixfoundry/payments/store"
)

// Payment links: the page a payer opens, and the links a charge carries.
//
// Every charge and static QR code has a paymentLinkID, a random UUID. The page that shows
// it to the payer (and the QR image on it) is served by an adapter (httpadapter serves
// /pay/<paymentLinkID>), so the adapter is what knows those URLs: a record's
// PaymentLinkURL and QRCodeImage are made by the Links the adapter installs with SetLinks.
// Without one (a program that uses the library in process and serves no page) both are
// empty: PaymentLinkID names the link, and httpadapter.PaymentLinkURL and
// httpadapter.QRCodeImageURL build the URLs from a base when a program needs them.
//
// The page has no App ID, so its id is looked up across companies through the system-space
// index of images_public.go (collPaymentLinks). What it returns, PaymentLink, is what the
// payer may see and nothing else: the merchant's name, the amount, the comment, the BR Code
// and where the payment stands. No customer, no tax ID, no other data of the company.

// Links makes the URLs of a payment link for the records a Service returns. Its methods
// must be pure functions of the id and safe for concurrent use: they run inside store
// transactions, which may run more than once.
type Links interface {
	// PaymentLinkURL is the URL of the payment page of paymentLinkID (paymentLinkUrl).
	PaymentLinkURL(paymentLinkID string) string
	// QRCodeImageURL is the URL of the QR image PNG of paymentLinkID (qrCodeImage).
	QRCodeImageURL(paymentLinkID string) string
}

// linksBox holds the installed Links (atomic.Pointer needs one concrete type).
type linksBox struct{ Links }

// SetLinks installs l as the maker of the links every record of every company carries from
// now on (those already written into events keep theirs); nil removes it, leaving the link
// fields empty. httpadapter.New installs its own, from httpadapter.Options.BaseURL: call
// it before the Service writes anything a client will read (events included).
func (s *Service) SetLinks(l Links) {
	if l == nil {
		s.core.pageLinks.Store(nil)
		return
	}
	s.core.pageLinks.Store(&linksBox{l})
}

// linkURLs are the paymentLinkUrl and qrCodeImage of paymentLinkID: empty without Links.
func (c *core) linkURLs(paymentLinkID string) (page, image string) {
	b := c.pageLinks.Load()
	if b == nil {
		return "", ""
	}
	return b.PaymentLinkURL(paymentLinkID), b.QRCodeImageURL(paymentLinkID)
}

// linksPointer is the type of core.pageLinks.
type linksPointer = atomic.Pointer[linksBox]

// PaymentLinkKind says what a payment link is for.
type PaymentLinkKind string

// Payment link kinds.
const (
	PaymentLinkCharge PaymentLinkKind = "CHARGE"  // a charge: one payment
	PaymentLinkQRCode PaymentLinkKind = "QR_CODE" // a static QR code: any number of payments
)

// PaymentLinkStatus is where a payment link stands, for the payer.
type PaymentLinkStatus string

// Payment link statuses. A static QR code is always WAITING: it takes any number of
// payments and does not expire.
const (
	PaymentLinkWaiting PaymentLinkStatus = "WAITING" // payable
	PaymentLinkPaid    PaymentLinkStatus = "PAID"    // a charge that has been paid
	PaymentLinkExpired PaymentLinkStatus = "EXPIRED" // a charge no longer payable
)

// PaymentLink is the public view of a payment link: what its payer may see.
type PaymentLink struct {
	ID           string            // the paymentLinkID
	Kind         PaymentLinkKind   // a charge or a static QR code
	MerchantName string            // the company's merchant name, as in the BR Code
	Comment      string            // the charge's or code's comment
	BRCode       string            // the copy-and-paste code; empty unless Status is WAITING
	Status       PaymentLinkStatus // where it stands now
	// Value is the amount asked, in centavos: a charge's value, a static QR code's fixed
	// value, or 0 when the code lets the payer choose.
	Value int64
	// Overdue is true for an OVERDUE charge, whose amount changes with the date (fines and
	// interest after the due date, discounts before it).
	Overdue bool
	// AmountDue is what paying now takes, in centavos: a waiting charge's amount due at the
	// time of the read (for an OVERDUE charge, with its discount, fines and interest), the
	// amount paid once paid, and Value otherwise.
	AmountDue int64
	// DueDate is an OVERDUE charge's due date; nil otherwise.
	DueDate *time.Time
	// ExpiresAt is when a charge stops being payable; zero for a static QR code.
	ExpiresAt time.Time
	// PaidAt is when a charge was paid; nil until then.
	PaidAt *time.Time
	// Now is the Service's time of the read, which Status and AmountDue are for: a page
	// counts the time left as ExpiresAt - Now, so a moved sandbox clock counts too.
	Now time.Time
}

// PaymentLink returns the public view of the payment link paymentLinkID, whichever company
// it belongs to: the page a payer opens has no App ID. The company s acts for does not
// matter. Only the exact paymentLinkID finds it (not a correlationID or another id); an
// unknown or deleted one is not found.
func (s *Service) PaymentLink(ctx context.Context, paymentLinkID string) (PaymentLink, error) {
	var l PaymentLink
	err := s.view(ctx, func(t *txn) error {
		var err error
		l, err = t.paymentLinkView(paymentLinkID)
		return err
	})
	return l, err
}

// paymentLinkOwner reads the system-space record of the paymentLinkID id: the company that
// owns it and what it is for. An unknown id is not found.
func (t *txn) paymentLinkOwner(id string) (paymentLink, error) {
	errNotFound := notFound("payment link not found")
	if id == "" {
		return paymentLink{}, errNotFound
	}
	r, err := t.tx.Get(collPaymentLinks, systemSpace, id)
	if errors.Is(err, store.ErrNotFound) {
		return paymentLink{}, errNotFound
	} else if err != nil {
		return paymentLink{}, internal(err)
	}
	var l paymentLink
	if err := decode(r, &l); err != nil {
		return paymentLink{}, err
	}
	return l, nil
}

// paymentLinkView builds the public view of the link id, reading, in the owning company,
// only the record the link is for and the company's merchant name.
func (t *txn) paymentLinkView(id string) (PaymentLink, error) {
	l, err := t.paymentLinkOwner(id)
	if err != nil {
		return PaymentLink{}, err
	}
	owner := t.forCompany(l.Company)
	key := "paymentLinkID:" + id
	v := PaymentLink{ID: id, Now: t.now}
	switch l.Kind {
	case linkCharge:
		c, err := owner.chargeByLink(id) // presented: status and amounts at t.now
		if err != nil {
			return PaymentLink{}, linkGone(err)
		}
		v.Kind, v.Comment, v.BRCode, v.Value = PaymentLinkCharge, c.Comment, c.BRCode, c.Value
		v.Overdue, v.DueDate, v.ExpiresAt, v.PaidAt = c.Type == ChargeOverdue, c.DueDate, c.ExpiresDate, c.PaidAt
		switch c.Status { // a code that can no longer pay the charge is not shown
		case ChargeCompleted:
			v.Status, v.AmountDue, v.BRCode = PaymentLinkPaid, c.PaidValue, ""
		case ChargeExpired:
			v.Status, v.AmountDue, v.BRCode = PaymentLinkExpired, c.Value, "" // nothing is due any more
		default:
			v.Status, v.AmountDue = PaymentLinkWaiting, c.AmountDue
		}
	case linkQRCode:
		var q PixQRCode
		if _, err := owner.getByKey(collQRCodes, key, "pix QR code", &q); err != nil {
			return PaymentLink{}, linkGone(err)
		}
		v.Kind, v.Comment, v.BRCode, v.Value = PaymentLinkQRCode, q.Comment, q.BRCode, q.Value
		v.Status, v.AmountDue = PaymentLinkWaiting, q.Value
	default:
		return PaymentLink{}, notFound("payment link not found")
	}
	co, err := owner.loadCompany()
	if err != nil {
		return PaymentLink{}, err
	}
	v.MerchantName = co.MerchantName
	return v, nil
}

// linkGone makes a record that the index outlived (deleted in between) not found.
func linkGone(err error) error {
	if ErrorCode(err) == ENOTFOUND {
		return notFound("payment link not found")
	}
	return err
}

// PayPaymentLink pays the charge or static QR code of the link paymentLinkID with the Pix
// p, whichever company the link belongs to, as a payer's bank would: the Pix goes to the
// company that owns the link, and only to the record the link is for. A charge takes its
// amount due now (p.Value 0) as ReceiveChargePix takes it, so a paid or expired charge is
// refused and concurrent calls pay it once; a static QR code takes p.Value, or its fixed
// value when p.Value is 0, as ReceivePix does. The link and its record are read in the
// transaction that pays: a link whose charge or QR code was deleted meanwhile pays nothing
// (before, the charge was found again by its correlationID, and a new charge that took it
// after the deletion was paid). It backs the sandbox's "Simulate payment" button on the
// payment page: it is not a way to pay in production.
func (s *Service) PayPaymentLink(ctx context.Context, paymentLinkID string, p ReceivePixParams) (Transaction, error) {
	var l paymentLink
	err := s.view(ctx, func(t *txn) error { // whose link: the transaction below is its company's
		var err error
		l, err = t.paymentLinkOwner(paymentLinkID)
		return err
	})
	if err != nil {
		return Transaction{}, err
	}
	owner := &Service{core: s.core, company: l.Company}
	var x Transaction
	err = owner.update(ctx, func(t *txn) error {
		now, err := t.paymentLinkOwner(paymentLinkID)
		if err != nil {
			return err
		}
		if now.Company != l.Company || now.Kind != l.Kind {
			return notFound("payment link not found")
		}
		switch l.Kind {
		case linkCharge:
			c, err := t.chargeByLink(paymentLinkID)
			if err != nil {
				return linkGone(err)
			}
			x, _, err = t.payCharge(c, p, "this charge") // the page's payer sees only the public view
			return linkGone(err)
		case linkQRCode:
			var q PixQRCode
			if _, err := t.getByKey(collQRCodes, "paymentLinkID:"+paymentLinkID, "pix QR code", &q); err != nil {
				return linkGone(err)
			}
			p := p // this run's: the store may run the function again
			switch {
			case p.Value == 0 && q.Value == 0:
				return invalid("value", "value is required: this QR code lets the payer choose the amount (centavos)")
			case p.Value == 0:
				p.Value = q.Value
			case q.Value != 0 && p.Value != q.Value:
				return invalid("value", "this QR code has a fixed value of %d centavos", q.Value)
			}
			p.TxID = q.Identifier
			x, err = t.receivePix(p)
			return err
		default:
			return notFound("payment link not found")
		}
	})
	if err != nil {
		return Transaction{}, err
	}
	return x, nil
}
