package payments

import (
	"context"
	"slices"
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
// finds it), is 1 to 25 letters and digits, unique among the company's QR codes, deleted
// ones included, and not a charge's; by default a new one.
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
	} else if err := t.checkQRIdentifier(q.Identifier); err != nil {
		return q, err
	}
	if err := t.checkQRCorrelationID(q.CorrelationID); err != nil {
		return q, err
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
	return []string{correlationKey(q.CorrelationID), "identifier:" + q.Identifier, "paymentLinkID:" + q.PaymentLinkID}
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
	for _, key := range []string{correlationKey(id), "identifier:" + id, "paymentLinkID:" + id} {
		if ok, err2 := found(err); err2 != nil || ok {
			break
		}
		_, err = t.getByKey(collQRCodes, key, "pix QR code", &q)
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
		if err := storeErr(t.tx.Delete(collQRCodes, t.company, q.ID), "pix QR code"); err != nil {
			return err
		}
		return t.noteDeletedQRCode(q)
	})
}

// collDeletedQRCodes holds a note (the code as it was) of each deleted static QR code,
// under its id and the keys of its identifier and correlationID: a Pix paying the code
// later is recorded under it (Unmatched "QR code deleted"), and the transaction list's
// pixQrCode filter finds the code's payments by any of the three, as for a live code.
const collDeletedQRCodes = "deleted_qrcodes"

// noteDeletedQRCode leaves the note of the deleted code q. A new code may take the
// correlationID of a deleted one (not its identifier), and be deleted in turn: its note
// takes the key from the older note, which keeps its id and identifier (the newest code is
// the one a correlationID names).
func (t *txn) noteDeletedQRCode(q PixQRCode) error {
	keys := []string{"identifier:" + q.Identifier, correlationKey(q.CorrelationID)}
	for _, k := range keys {
		old, err := t.tx.GetByKey(collDeletedQRCodes, t.company, k)
		if ok, err := found(storeErr(err, "deleted pix QR code")); err != nil {
			return err
		} else if !ok {
			continue
		}
		old.Keys = slices.DeleteFunc(old.Keys, func(ok string) bool { return ok == k })
		if err := storeErr(t.tx.Put(collDeletedQRCodes, t.company, old), "deleted pix QR code"); err != nil {
			return err
		}
	}
	return t.insert(collDeletedQRCodes, q.ID, "deleted pix QR code", q, keys, nil)
}

// deletedQRCode is the deleted static QR code id names (its id, identifier or
// correlationID; only its identifier when byTxID), as its note keeps it, or nil.
func (t *txn) deletedQRCode(id string, byTxID bool) (*PixQRCode, error) {
	var q PixQRCode
	if !byTxID {
		if ok, err := found(t.get(collDeletedQRCodes, id, "deleted pix QR code", &q)); err != nil || ok {
			return &q, err
		}
	}
	keys := []string{"identifier:" + id}
	if !byTxID {
		keys = append(keys, correlationKey(id))
	}
	for _, key := range keys {
		_, err := t.getByKey(collDeletedQRCodes, key, "deleted pix QR code", &q)
		if ok, err := found(err); err != nil || ok {
			return &q, err
		}
	}
	return nil, nil
}

// checkQRIdentifier refuses an identifier a client chose for a new static QR code when it
// would name something else: every id of a live code (the lookups by id, correlationID and
// identifier come in that order, so a code whose identifier was another's correlationID was
// read, deleted and paid in the sandbox as the other), a deleted code (printed copies of
// it may still be paid: their Pix stay its own), or a charge (a Pix with it would pay the
// charge, which receiveTarget looks for first).
func (t *txn) checkQRIdentifier(id string) error {
	if !isTxID(id) {
		return invalid("identifier", "identifier must be 1 to 25 letters and digits (the BR Code's reference label)")
	}
	if _, err := t.findPixQRCode(id); err == nil {
		return conflict("identifier", "identifier %q already names a pix QR code", id)
	} else if _, err := found(err); err != nil {
		return err
	}
	if old, err := t.deletedQRCode(id, false); err != nil {
		return err
	} else if old != nil {
		return conflict("identifier", "identifier %q names a deleted pix QR code, and is not given again", id)
	}
	c, _, err := t.receiveTarget(id)
	if err != nil {
		return err
	}
	deleted, err := t.deletedCharge(id)
	if err != nil {
		return err
	}
	if c != nil || deleted != nil {
		return conflict("identifier", "identifier %q is a charge's reference label", id)
	}
	return nil
}

// checkQRCorrelationID refuses a new static QR code's correlationID when it is another
// code's id or identifier, live or deleted: the lookups would find one where the client
// meant the other (see checkQRIdentifier). One taken as a correlationID is a conflict when
// the code is stored.
func (t *txn) checkQRCorrelationID(corr string) error {
	for _, read := range []func() error{
		func() error { _, err := t.tx.Get(collQRCodes, t.company, corr); return err },
		func() error { _, err := t.tx.GetByKey(collQRCodes, t.company, "identifier:"+corr); return err },
		func() error { _, err := t.tx.Get(collDeletedQRCodes, t.company, corr); return err },
		func() error { _, err := t.tx.GetByKey(collDeletedQRCodes, t.company, "identifier:"+corr); return err },
	} {
		if ok, err := found(storeErr(read(), "pix QR code")); err != nil {
			return err
		} else if ok {
			return conflict("correlationID", "correlationID %q is a pix QR code's id or identifier", corr)
		}
	}
	return nil
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
