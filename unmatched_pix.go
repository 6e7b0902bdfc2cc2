package payments

import (
	"context"
	"time"

	"github.com/pixfoundry/payments/store"
)

// Unmatched Pix: money the bank received that routed to no company (ReceiveBankPix found
// neither a charge by its txid nor a company holding its key). It is kept, never dropped,
// in the system space, until an operator assigns it to a company (AssignUnmatchedPix),
// which records it there as the company's ReceivePix would.
const (
	collUnmatchedPix = "unmatched_pix" // system space: one record per endToEndId, by it
	// indexUnassigned lists the unmatched Pix not yet assigned, by when they were kept.
	indexUnassigned = "unassigned"
)

// UnmatchedPix is a Pix the bank received that no company took: kept as the bank reported
// it, until an operator assigns it to a company.
type UnmatchedPix struct {
	EndToEndID string    `json:"endToEndId"`
	Value      int64     `json:"value"` // centavos
	Time       time.Time `json:"time"`  // when it settled
	TxID       string    `json:"txid,omitempty"`
	// PixKey is the key it was sent to: canonical when it is a Pix key, as the bank
	// reported it otherwise.
	PixKey      string `json:"pixKey,omitempty"`
	Payer       *Payer `json:"payer,omitempty"`
	InfoPagador string `json:"infoPagador,omitempty"`
	// CreatedAt is when it was kept.
	CreatedAt time.Time `json:"createdAt"`
	// CompanyID is the company it was assigned to; "" while it waits for one.
	CompanyID string `json:"companyId,omitempty"`
	// TransactionID is the assigned company's transaction of the Pix (GetTransaction
	// takes it); "" while it waits.
	TransactionID string     `json:"transactionID,omitempty"`
	AssignedAt    *time.Time `json:"assignedAt,omitempty"`
}

func (u UnmatchedPix) indexes() []store.Index {
	ix := []store.Index{byCreation(u.CreatedAt)}
	if u.CompanyID == "" {
		ix = append(ix, store.Index{Name: indexUnassigned, Sort: sortTime(u.CreatedAt)})
	}
	return ix
}

// unmatchedPix reads the unmatched Pix e2e; ok is false when there is none.
func (t *txn) unmatchedPix(e2e string) (u UnmatchedPix, ok bool, err error) {
	r, err := t.tx.Get(collUnmatchedPix, systemSpace, e2e)
	if ok, err := found(storeErr(err, "unmatched Pix")); err != nil || !ok {
		return UnmatchedPix{}, false, err
	}
	if err := decode(r, &u); err != nil {
		return UnmatchedPix{}, false, err
	}
	return u, true, nil
}

// keepUnmatched records p (its EndToEndID cleaned, its Value checked), sent to key, as
// unmatched. It checks p as receivePix would, so that assigning it later records it.
func (t *txn) keepUnmatched(p ReceivePixParams, key string) (UnmatchedPix, error) {
	at, err := t.pixTime(p.Time)
	if err != nil {
		return UnmatchedPix{}, err
	}
	u := UnmatchedPix{EndToEndID: p.EndToEndID, Value: p.Value, Time: at, CreatedAt: t.now}
	if u.TxID, err = cleanString("txid", p.TxID, 64); err != nil {
		return UnmatchedPix{}, err
	}
	if u.InfoPagador, err = cleanString("infoPagador", p.InfoPagador, 140); err != nil {
		return UnmatchedPix{}, err
	}
	if p.Payer != nil {
		if _, err := p.Payer.customer(); err != nil {
			return UnmatchedPix{}, err
		}
		payer := *p.Payer
		u.Payer = &payer
	}
	if k, _, err := parsePixKey("pixKey", key, ""); err == nil {
		u.PixKey = k
	} else if u.PixKey, err = cleanString("pixKey", key, 200); err != nil {
		return UnmatchedPix{}, err
	}
	r, err := encode(u.EndToEndID, u, nil, u.indexes())
	if err != nil {
		return UnmatchedPix{}, err
	}
	return u, storeErr(t.tx.Insert(collUnmatchedPix, systemSpace, r), "unmatched Pix")
}

// UnmatchedPixFilter selects a page of ListUnmatchedPix. Unassigned lists only the Pix
// still waiting for a company.
type UnmatchedPixFilter struct {
	ListParams
	Unassigned bool
}

// ListUnmatchedPix returns a page of the Pix the bank received that routed to no company,
// newest first (by when they were kept), as every list is; f.Unassigned leaves out those
// already assigned. Unmatched Pix belong to no company: this is the platform operator's
// view, and the company this Service acts for does not matter; never show it to a company.
func (s *Service) ListUnmatchedPix(ctx context.Context, f UnmatchedPixFilter) ([]UnmatchedPix, PageInfo, error) {
	p, err := f.ListParams.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	index := indexAll
	if f.Unassigned {
		index = indexUnassigned
	}
	var out []UnmatchedPix
	var total int
	err = s.view(ctx, func(t *txn) error {
		page, err := t.tx.List(collUnmatchedPix, systemSpace, p.query(index))
		if err != nil {
			return internal(err)
		}
		out, total = make([]UnmatchedPix, 0, len(page.Records)), page.Total
		for _, r := range page.Records {
			var u UnmatchedPix
			if err := decode(r, &u); err != nil {
				return err
			}
			out = append(out, u)
		}
		return nil
	})
	if err != nil {
		return nil, PageInfo{}, err
	}
	return out, p.info(total), nil
}

// AssignUnmatchedPix gives the unmatched Pix endToEndID to the company companyID: it is
// recorded there as the company's ReceivePix records it (with its txid, so a charge or QR
// code of that company it names takes it; at the key it was sent to when the company
// holds that key, at the company's key otherwise), and the unmatched record is marked
// assigned, with the company and the transaction, in the same transaction. It returns the
// company's transaction and the record as assigned.
//
// An unknown endToEndID is ENOTFOUND on "endToEndId", an unknown company ENOTFOUND on
// "companyId"; a Pix already assigned (or recorded by a company since it was kept) is
// EPRECONDITION on "endToEndId". Like ListUnmatchedPix it is the operator's, across
// companies: the company this Service acts for does not matter.
func (s *Service) AssignUnmatchedPix(ctx context.Context, endToEndID, companyID string) (Transaction, UnmatchedPix, error) {
	e2e, err := cleanString("endToEndId", endToEndID, MaxEndToEndID)
	if err != nil {
		return Transaction{}, UnmatchedPix{}, err
	}
	if e2e == "" {
		return Transaction{}, UnmatchedPix{}, invalid("endToEndId", "endToEndId is required")
	}
	if companyID == "" {
		return Transaction{}, UnmatchedPix{}, invalid("companyId", "companyId is required")
	}
	var x Transaction
	var u UnmatchedPix
	err = s.update(ctx, func(t *txn) error {
		var ok bool
		var err error
		if u, ok, err = t.unmatchedPix(e2e); err != nil {
			return err
		} else if !ok {
			return &Error{Code: ENOTFOUND, Field: "endToEndId", Message: "Unmatched Pix not found: " + e2e}
		}
		if u.CompanyID != "" {
			return precondition("endToEndId", "the Pix %s was already assigned to company %s", e2e, u.CompanyID)
		}
		if recorder, ok, err := t.routeOf(collReceivedPix, e2e); err != nil {
			return err
		} else if ok {
			return precondition("endToEndId", "the Pix %s was already recorded by company %s", e2e, recorder)
		}
		if _, err := t.tx.Get(collCompanies, systemSpace, companyID); err != nil {
			if ok, err := found(storeErr(err, "company")); err != nil || ok {
				return err
			}
			return &Error{Code: ENOTFOUND, Field: "companyId", Message: "Company not found: " + companyID}
		}
		p := ReceivePixParams{EndToEndID: e2e, Value: u.Value, Time: u.Time, TxID: u.TxID, Payer: u.Payer, InfoPagador: u.InfoPagador}
		if u.PixKey != "" {
			if owner, ok, err := t.pixKeyOwnerOf(u.PixKey); err != nil {
				return err
			} else if ok && owner.Company == companyID {
				p.PixKey = u.PixKey
			}
		}
		if x, err = t.receiveIn(companyID, p); err != nil {
			return err
		}
		at := t.now
		u.CompanyID, u.TransactionID, u.AssignedAt = companyID, x.TransactionID, &at
		r, err := encode(e2e, u, nil, u.indexes())
		if err != nil {
			return err
		}
		return storeErr(t.tx.Put(collUnmatchedPix, systemSpace, r), "unmatched Pix")
	})
	if err != nil {
		return Transaction{}, UnmatchedPix{}, err
	}
	return x, u, nil
}
