package payments

import (
	"context"
	"errors"
	"strings"

	"github.com/pixfoundry/payments/store"
)

// The public QR image.
//
// A charge's or static QR code's qrCodeImage (made by the adapter's Links, see SetLinks) is
// <base URL>/<vendor>/charge/brcode/image/<paymentLinkID>.png, and the real API serves that
// URL without credentials: browsers and e-mail clients load it from <img> tags, which
// cannot send an App ID. Serving it publicly gives nothing away: the image holds only the
// BR Code, which exists to be shown to whoever pays, and the paymentLinkID is a random UUID,
// known only to those the company gave the link to.
//
// Answering it needs the company of a paymentLinkID without an App ID. The system space
// keeps that one fact: collection "paymentlinks", record id = the paymentLinkID, data = the
// company's id and what the link is for, written in the same transaction as the charge or
// QR code and deleted with it. With Authenticate, it is the only read across companies, and
// it leads to nothing but the image and the payment page's public view (paylinks.go).
const collPaymentLinks = "paymentlinks"

// Kinds of paymentlinks records.
const (
	linkCharge = "charge"
	linkQRCode = "qrcode"
)

// paymentLink is the system-space record of one paymentLinkID.
type paymentLink struct {
	Company string `json:"company"`
	Kind    string `json:"kind"` // linkCharge or linkQRCode
	// ID is the record id of a charge (not of a QR code), by which its company finds it
	// (chargeByLink): charges have no paymentLinkID key.
	ID string `json:"id,omitempty"`
}

// addPaymentLink records, in the system space, that the paymentLinkID id belongs to the
// transaction's company.
func (t *txn) addPaymentLink(id, kind string) error {
	r, err := encode(id, paymentLink{Company: t.company, Kind: kind}, nil, nil)
	if err != nil {
		return err
	}
	return storeErr(t.tx.Insert(collPaymentLinks, systemSpace, r), "payment link")
}

// removePaymentLink deletes the record of the paymentLinkID id. A record that is not there
// (a charge made before the index existed) is not an error.
func (t *txn) removePaymentLink(id string) error {
	err := t.tx.Delete(collPaymentLinks, systemSpace, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return storeErr(err, "payment link")
}

// QRCodeImageByLink returns a size x size PNG of the BR Code of the charge or static QR
// code with the paymentLinkID, whichever company it belongs to: it backs the public image
// URL that qrCodeImage links to (see collPaymentLinks for why that is public). The company
// s acts for does not matter. Size 0 means DefaultQRSize; sizes outside MinQRSize..MaxQRSize
// are invalid. An unknown or deleted paymentLinkID is not found. A charge that is paid or
// expired is EPRECONDITION: its code is no longer shown to payers, since a Pix paying it
// would only reach the company as an unmatched payment to refund by hand (QRCodeImage,
// which needs the company's App ID, still draws it). The returned bytes are
// shared with the image cache and must not be modified.
func (s *Service) QRCodeImageByLink(ctx context.Context, paymentLinkID string, size int) ([]byte, error) {
	size, err := qrSize(size)
	if err != nil {
		return nil, err
	}
	var code string
	err = s.view(ctx, func(t *txn) error {
		var err error
		code, err = t.brCodeByLink(paymentLinkID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.render(ctx, code, size)
}

// brCodeByLink finds, through the system-space index, the BR Code of the charge or QR code
// with the paymentLinkID id, reading only by that exact key in the owning company.
func (t *txn) brCodeByLink(id string) (string, error) {
	errNotFound := notFound("QR code not found")
	l, err := t.paymentLinkOwner(id)
	if ErrorCode(err) == ENOTFOUND {
		return "", errNotFound
	} else if err != nil {
		return "", err
	}
	owner := t.forCompany(l.Company)
	key := "paymentLinkID:" + id
	var code string
	switch l.Kind {
	case linkCharge:
		var c Charge
		c, err = owner.chargeByLink(id) // presented: EXPIRED once its time is up
		if err == nil && c.Status != ChargeActive {
			return "", precondition("paymentLinkID", "the charge is %s: its QR code is no longer shown", strings.ToLower(string(c.Status)))
		}
		code = c.BRCode
	case linkQRCode:
		var q PixQRCode
		_, err = owner.getByKey(collQRCodes, key, "pix QR code", &q)
		code = q.BRCode
	default:
		return "", errNotFound
	}
	if ErrorCode(err) == ENOTFOUND { // the index outlived its record
		return "", errNotFound
	}
	return code, err
}
