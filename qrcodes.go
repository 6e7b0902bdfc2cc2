package payments

import (
	"context"
	"time"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/store"
)

const collQRCodes = "qrcodes"

// PixQRCode is a static QR code: a reusable BR Code against the company's Pix key, with
// an optional fixed value, that any number of payments can use. Its identifier is the
// code's txid, so each payment finds it.
type PixQRCode struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	Value          int64     `json:"value"` // 0: the payer chooses the amount
	Comment        string    `json:"comment"`
	CorrelationID  string    `json:"correlationID"`
	Identifier     string    `json:"identifier"`
	PaymentLinkID  string    `json:"paymentLinkID"`
	PaymentLinkURL string    `json:"paymentLinkUrl"` // by the installed Links (SetLinks); "" without
	QRCodeImage    string    `json:"qrCodeImage"`    // by the installed Links (SetLinks); "" without
	BRCode         string    `json:"brCode"`
	PixKey         string    `json:"pixKey"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
}

// CreatePixQRCodeParams create a static QR code. Name is required; CorrelationID
// defaults to a new UUID; PixKey, when given, must be the company's key. Comment has at
// most 140 characters: the record keeps all of it, the BR Code as much as fits.
// Identifier, the BR Code's reference label (its txid, by which a Pix paying the code
// finds it), is 1 to 25 letters and digits, unique among the company's QR codes; by
// default a new one.
type CreatePixQRCodeParams struct {
	Name          string
	CorrelationID string
	Value         int64
	Comment       string
	PixKey        string
	Identifier    string
}

// CreatePixQRCode creates a static QR code. A correlationID already used is a conflict.
func (s *Service) CreatePixQRCode(ctx context.Context, p CreatePixQRCodeParams) (PixQRCode, error) {
	var q PixQRCode
	err := s.update(ctx, func(t *txn) error {
		var err error
		q, err = t.createPixQRCode(p)
		return err
	})
	return q, err
}

func (t *txn) createPixQRCode(p CreatePixQRCodeParams) (PixQRCode, error) {
	q := PixQRCode{CreatedAt: t.now, UpdatedAt: t.now}
	var err error
	if q.Name, err = cleanString("name", p.Name, 200); err != nil {
		return q, err
	}
	if q.Name == "" {
		return q, invalid("name", "name is required")
	}
	if q.CorrelationID, err = cleanCorrelationID("correlationID", p.CorrelationID, false); err != nil {
		return q, err
	}
	if q.CorrelationID == "" {
		q.CorrelationID = t.svc.core.ids.uuid()
	}
	if p.Value < 0 || p.Value > MaxChargeValue {
		return q, invalid("value", "value must be 0 (payer chooses) or a positive number of centavos up to %d", int64(MaxChargeValue))
	}
	q.Value = p.Value
	if q.Comment, err = cleanString("comment", p.Comment, MaxComment); err != nil {
		return q, err
	}
	co, err := t.loadCompany()
	if err != nil {
		return q, err
	}
	q.PixKey = co.PixKey
	if p.PixKey != "" {
		key, _, err := parsePixKey("pixKey", p.PixKey, "")
		if err != nil {
			return q, err
		}
		if key != co.PixKey {
			return q, invalid("pixKey", "pixKey must be the company's Pix key %s", co.PixKey)
		}
	}
	q.ID = t.newID()
	q.Identifier = p.Identifier
	if q.Identifier == "" {
		q.Identifier = t.svc.core.ids.hex32()[:25]
	} else if !isTxID(q.Identifier) {
		return q, invalid("identifier", "identifier must be 1 to 25 letters and digits (the BR Code's reference label)")
	}
	q.PaymentLinkID = t.svc.core.ids.uuid()
	q.BRCode, err = brcode.EncodeStatic(brcode.Static{
		Key: co.PixKey, Name: co.MerchantName, City: co.MerchantCity,
		TxID: q.Identifier, Amount: q.Value, Info: q.Comment, TruncateInfo: true,
	})
	if err != nil {
		return q, brcodeErr(err)
	}
	if err := t.insert(collQRCodes, q.ID, "pix QR code", q, q.keys(), []store.Index{byCreation(q.CreatedAt)}); err != nil {
		if ErrorCode(err) == ECONFLICT && ErrorField(err) == "correlationID" {
			return q, conflict("correlationID", "a pix QR code with correlationID %q already exists", q.CorrelationID)
		}
		if ErrorCode(err) == ECONFLICT && ErrorField(err) == "identifier" {
			return q, conflict("identifier", "a pix QR code with identifier %q already exists", q.Identifier)
		}
		return q, err
	}
	if err := t.addPaymentLink(q.PaymentLinkID, linkQRCode); err != nil { // for the public QR image
		return q, err
	}
	t.presentQRCode(&q)
	return q, nil
}

func (q PixQRCode) keys() []string {
	return []string{"correlationID:" + q.CorrelationID, "identifier:" + q.Identifier, "paymentLinkID:" + q.PaymentLinkID}
}

func (t *txn) presentQRCode(q *PixQRCode) {
	q.PaymentLinkURL, q.QRCodeImage = t.svc.core.linkURLs(q.PaymentLinkID) // see SetLinks
}

// GetPixQRCode returns the static QR code with the id, correlationID, identifier or
// paymentLinkID id.
func (s *Service) GetPixQRCode(ctx context.Context, id string) (PixQRCode, error) {
	var q PixQRCode
	err := s.view(ctx, func(t *txn) error {
		var err error
		q, err = t.findPixQRCode(id)
		return err
	})
	return q, err
}

func (t *txn) findPixQRCode(id string) (PixQRCode, error) {
	var q PixQRCode
	err := t.get(collQRCodes, id, "pix QR code", &q)
	for _, key := range []string{"correlationID:", "identifier:", "paymentLinkID:"} {
		if ok, err2 := found(err); err2 != nil || ok {
			break
		}
		_, err = t.getByKey(collQRCodes, key+id, "pix QR code", &q)
	}
	if err != nil {
		return PixQRCode{}, err
	}
	t.presentQRCode(&q)
	return q, nil
}

// ListPixQRCodes returns the company's static QR codes, newest first.
func (s *Service) ListPixQRCodes(ctx context.Context, p ListParams) ([]PixQRCode, PageInfo, error) {
	p, err := p.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	var out []PixQRCode
	var total int
	err = s.view(ctx, func(t *txn) error {
		out, total, err = list(t, collQRCodes, p.query(indexAll), func(q *PixQRCode, _ string) { t.presentQRCode(q) })
		return err
	})
	return out, p.info(total), err
}

// DeletePixQRCode deletes a static QR code. Payments made with its code later are still
// credited to the company (see ReceivePix).
func (s *Service) DeletePixQRCode(ctx context.Context, id string) error {
	return s.update(ctx, func(t *txn) error {
		q, err := t.findPixQRCode(id)
		if err != nil {
			return err
		}
		if err := t.removePaymentLink(q.PaymentLinkID); err != nil {
			return err
		}
		return storeErr(t.tx.Delete(collQRCodes, t.company, q.ID), "pix QR code")
	})
}

// isTxID reports whether s is a BR Code reference label a client may choose: 1 to 25
// ASCII letters and digits.
func isTxID(s string) bool {
	if len(s) < 1 || len(s) > 25 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
