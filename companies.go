package payments

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/store"
)

// Companies live outside every company's space, in the system space.
const (
	systemSpace     = "_system"
	collCompanies   = "companies"
	defaultCompName = "Default Company"
	defaultCity     = "SAO PAULO"
)

// Company is a tenant: it owns accounts, applications, customers, charges and the rest.
// Its receiving identity (Pix key, merchant name and city) is what its BR Codes encode.
type Company struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	TaxID        *TaxID `json:"taxID,omitempty"`
	Partner      bool   `json:"isPartner"`
	PartnerID    string `json:"partnerID,omitempty"` // the partner that pre-registered it
	PixKey       string `json:"pixKey"`
	MerchantName string `json:"merchantName"`
	MerchantCity string `json:"merchantCity"`
	// FeePolicy is what the platform takes from each Pix received; nil means DefaultFeePolicy().
	FeePolicy *FeePolicy `json:"feePolicy,omitempty"`
	// CashbackPolicy is the percentage cashback; nil means DefaultCashbackPolicy().
	CashbackPolicy *CashbackPolicy `json:"cashbackPolicy,omitempty"`
	// WithdrawalPolicy is the fee on small withdrawals; nil means DefaultWithdrawalPolicy().
	WithdrawalPolicy *WithdrawalPolicy `json:"withdrawalPolicy,omitempty"`
	CreatedAt        time.Time         `json:"createdAt"`
	UpdatedAt        time.Time         `json:"updatedAt"`
}

// CreateCompanyParams describe a company being created. Empty fields take defaults: a random
// (EVP) Pix key, the company name as merchant name, and the city "SAO PAULO". The Pix key
// must not be one another company holds (a conflict on "pixKey"): a bank reports a Pix by
// its key, so a key names one company on the whole platform.
type CreateCompanyParams struct {
	Name           string
	TaxID          string
	Partner        bool
	PixKey         string
	MerchantName   string
	MerchantCity   string
	FeePolicy      *FeePolicy
	CashbackPolicy *CashbackPolicy
	// WithdrawalPolicy replaces the company's; nil keeps it (a company that never had one
	// uses DefaultWithdrawalPolicy()).
	WithdrawalPolicy *WithdrawalPolicy
}

// CompanyParams is the former name of CreateCompanyParams.
//
// Deprecated: use CreateCompanyParams.
type CompanyParams = CreateCompanyParams

func (p CreateCompanyParams) build(id string, now time.Time, ids *idSource) (Company, error) {
	name, err := cleanString("name", p.Name, 200)
	if err != nil {
		return Company{}, err
	}
	if name == "" {
		name = defaultCompName
	}
	c := Company{ID: id, Name: name, Partner: p.Partner, FeePolicy: p.FeePolicy, CashbackPolicy: p.CashbackPolicy, WithdrawalPolicy: p.WithdrawalPolicy, CreatedAt: now, UpdatedAt: now}
	if wp := p.WithdrawalPolicy; wp != nil && (wp.MinFree < 0 || wp.Fee < 0 || wp.MinFree > MaxChargeValue || wp.Fee > MaxChargeValue) {
		return Company{}, invalid("withdrawalPolicy", "withdrawalPolicy needs 0 <= minFree, fee <= %d", int64(MaxChargeValue))
	}
	if fp := p.FeePolicy; fp != nil && (fp.BasisPoints < 0 || fp.BasisPoints > 10000 || fp.Min < 0 || fp.Max < 0 || fp.Max > 0 && fp.Max < fp.Min) {
		return Company{}, invalid("feePolicy", "feePolicy needs basisPoints 0..10000 and 0 <= min <= max")
	}
	if cp := p.CashbackPolicy; cp != nil && (cp.BasisPoints < 0 || cp.BasisPoints > 10000) {
		return Company{}, invalid("cashbackPolicy", "cashbackPolicy needs basisPoints 0..10000")
	}
	if p.TaxID != "" {
		if c.TaxID, err = parseTaxID("taxID", p.TaxID); err != nil {
			return Company{}, err
		}
	}
	c.PixKey = p.PixKey
	if c.PixKey == "" {
		c.PixKey = ids.uuid()
	}
	if _, c.PixKey, err = brcode.DetectKey(c.PixKey); err != nil {
		return Company{}, invalid("pixKey", "pixKey is not a valid Pix key: %v", err)
	}
	if c.MerchantName, err = cleanString("merchantName", p.MerchantName, 200); err != nil {
		return Company{}, err
	}
	if c.MerchantName == "" {
		c.MerchantName = name
	}
	if c.MerchantCity, err = cleanString("merchantCity", p.MerchantCity, 200); err != nil {
		return Company{}, err
	}
	if c.MerchantCity == "" {
		c.MerchantCity = defaultCity
	}
	nameField := "merchantName"
	if p.MerchantName == "" {
		nameField = "name" // the merchant name is the company's name (a city defaults to defaultCity)
	}
	if err := checkBRCodeText(nameField, c.MerchantName); err != nil {
		return Company{}, err
	}
	if err := checkBRCodeText("merchantCity", c.MerchantCity); err != nil {
		return Company{}, err
	}
	return c, nil
}

// checkBRCodeText refuses a merchant name or city that folds to nothing (brcode.Fold):
// every charge's BR Code carries them, so each would fail.
func checkBRCodeText(field, value string) error {
	if brcode.Fold(value) == "" {
		return invalid(field, "%s %q has no character a BR Code can carry (letters, digits or signs of printable ASCII once accents are dropped)", field, value)
	}
	return nil
}

// ensureDefaultCompany creates the default company on first open and, on a later one,
// gives the stored company what p sets that differs from it, in one transaction (see
// Options.DefaultCompany); the fields it changed are logged.
func (s *Service) ensureDefaultCompany(ctx context.Context, p CreateCompanyParams) error {
	p.Partner = true // the default company may pre-register others
	var changed []string
	err := s.update(ctx, func(t *txn) error {
		changed = nil // afresh if the store runs this again
		_, err := t.tx.Get(collCompanies, systemSpace, DefaultCompanyID)
		if errors.Is(err, store.ErrNotFound) {
			first := p
			if first.Name == "" {
				first.Name = defaultCompName
			}
			_, err = t.createCompany(DefaultCompanyID, first, "")
			return err
		}
		if err != nil {
			return err // the store failed: never create over a company that may be there
		}
		u := CompanyUpdate{FeePolicy: p.FeePolicy, CashbackPolicy: p.CashbackPolicy, WithdrawalPolicy: p.WithdrawalPolicy}
		for _, f := range []struct {
			to   **string
			from string
		}{{&u.Name, p.Name}, {&u.PixKey, p.PixKey}, {&u.MerchantName, p.MerchantName}, {&u.MerchantCity, p.MerchantCity}} {
			if strings.TrimSpace(f.from) != "" { // empty: the stored value stays
				*f.to = &f.from
			}
		}
		_, changed, err = t.updateCompany(u, p.TaxID, false)
		return err
	})
	if err != nil {
		return defaultCompanyErr(err)
	}
	if len(changed) > 0 {
		s.core.log.Info("the default company changed to match Options.DefaultCompany", "company", DefaultCompanyID, "fields", strings.Join(changed, ","))
	}
	return nil
}

// defaultCompanyErr names the Options field of an error about Options.DefaultCompany:
// "DefaultCompany.PixKey" for "pixKey", in the field and at the head of the message.
func defaultCompanyErr(err error) error {
	var e *Error
	if !errors.As(err, &e) || e.Field == "" {
		return err
	}
	f := "DefaultCompany." + strings.ToUpper(e.Field[:1]) + e.Field[1:]
	if e.Field == "taxID" {
		f = "DefaultCompany.TaxID"
	}
	return &Error{Code: e.Code, Field: f, Message: "Options." + f + ": " + e.Message, cause: e.cause}
}

// createCompany stores a new company, registered by partnerID if not empty, with its
// default account.
func (t *txn) createCompany(id string, p CreateCompanyParams, partnerID string) (Company, error) {
	c, err := p.build(id, t.now, t.svc.core.ids)
	if err != nil {
		return Company{}, err
	}
	c.PartnerID = partnerID
	r, err := encode(id, c, nil, []store.Index{byCreation(t.now)})
	if err != nil {
		return Company{}, err
	}
	if err := t.tx.Insert(collCompanies, systemSpace, r); err != nil {
		return Company{}, storeErr(err, "company")
	}
	if err := t.createDefaultAccount(c); err != nil {
		return Company{}, err
	}
	if err := t.forCompany(c.ID).claimPixKey("pixKey", c.PixKey, pixKeyOwner{Kind: keyOfCompany}); err != nil {
		return Company{}, err // another company's key (pixkeys.go)
	}
	return c, nil
}

// GetCompany returns the company this Service acts for.
func (s *Service) GetCompany(ctx context.Context) (Company, error) {
	var c Company
	err := s.view(ctx, func(t *txn) error {
		r, err := t.tx.Get(collCompanies, systemSpace, s.company)
		if err != nil {
			return storeErr(err, "company")
		}
		return decode(r, &c)
	})
	return c, err
}

// CreateCompany creates a new company registered by this one, which must be a partner.
// The new company starts with its default account and no other data; act for it with
// Company. It is not a partner itself: p.Partner true is EINVALID on "partner" (only the
// default company of Options is one).
func (s *Service) CreateCompany(ctx context.Context, p CreateCompanyParams) (Company, error) {
	if p.Partner {
		return Company{}, invalid("partner", "a company a partner registers cannot be a partner itself")
	}
	var c Company
	err := s.update(ctx, func(t *txn) error {
		if err := t.requirePartner(); err != nil {
			return err
		}
		var err error
		c, err = t.registerCompany(p)
		return err
	})
	return c, err
}

// requirePartner fails unless the transaction's company is a partner.
func (t *txn) requirePartner() error {
	me, err := t.loadCompany()
	if err != nil {
		return err
	}
	if !me.Partner {
		return &Error{Code: EFORBIDDEN, Message: "only partner companies may use partner operations"}
	}
	return nil
}

// registerCompany creates a company registered by this (partner) one.
func (t *txn) registerCompany(p CreateCompanyParams) (Company, error) {
	p.Partner = false
	return t.createCompany(t.newID(), p, t.company)
}

// fees returns the company's fee policy.
func (c Company) fees() FeePolicy {
	if c.FeePolicy != nil {
		return *c.FeePolicy
	}
	return DefaultFeePolicy()
}

// company loads the company of the transaction.
func (t *txn) loadCompany() (Company, error) {
	r, err := t.tx.Get(collCompanies, systemSpace, t.company)
	if err != nil {
		return Company{}, storeErr(err, "company")
	}
	return decodeMemoized[Company](&t.svc.core.memo, collCompanies, systemSpace, r)
}

// detached is c with its tax ID and policies copied. A Company from the decode memo
// (loadCompany) shares them with every other read of the same record: one handed to a
// caller (UpdateCompany) who changed them would change the fees the Service charges. The
// Service's own reads only read them, so they take the memo's as they are.
func (c Company) detached() Company {
	c.TaxID = clonePtr(c.TaxID)
	c.FeePolicy = clonePtr(c.FeePolicy)
	c.CashbackPolicy = clonePtr(c.CashbackPolicy)
	c.WithdrawalPolicy = clonePtr(c.WithdrawalPolicy)
	return c
}

// clonePtr is a pointer to a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// CompanyUpdate changes the company's receiving identity and policies; nil fields stay,
// and a text field given must not be empty (EINVALID naming it). Charges and QR codes
// created before keep the BR Codes they were made with.
type CompanyUpdate struct {
	Name           *string
	PixKey         *string
	MerchantName   *string
	MerchantCity   *string
	FeePolicy      *FeePolicy
	CashbackPolicy *CashbackPolicy
	// WithdrawalPolicy replaces the company's; nil keeps it.
	WithdrawalPolicy *WithdrawalPolicy
}

// UpdateCompany changes the company this Service acts for. The company's Pix key is its
// default account's, so a new key that another account or a subaccount of the company
// has is a conflict on "pixKey", and so is a key another company holds (Pix keys are
// unique across companies); the old key is released, free for any company to take.
func (s *Service) UpdateCompany(ctx context.Context, u CompanyUpdate) (Company, error) {
	var c Company
	err := s.update(ctx, func(t *txn) error {
		var err error
		c, _, err = t.updateCompany(u, "", true)
		return err
	})
	return c.detached(), err // c has the memo's policies where u gave none
}

// updateCompany applies u, and taxID if not empty, to the transaction's company and
// returns it with the names of the fields whose value changed. With always false, a u
// that changes nothing writes nothing (UpdatedAt stays).
func (t *txn) updateCompany(u CompanyUpdate, taxID string, always bool) (Company, []string, error) {
	c, err := t.loadCompany()
	if err != nil {
		return Company{}, nil, err
	}
	p := CreateCompanyParams{Name: c.Name, PixKey: c.PixKey, MerchantName: c.MerchantName, MerchantCity: c.MerchantCity,
		FeePolicy: c.FeePolicy, CashbackPolicy: c.CashbackPolicy, WithdrawalPolicy: c.WithdrawalPolicy, Partner: c.Partner}
	for _, f := range []struct {
		field string
		to    *string
		from  *string
	}{{"name", &p.Name, u.Name}, {"pixKey", &p.PixKey, u.PixKey}, {"merchantName", &p.MerchantName, u.MerchantName}, {"merchantCity", &p.MerchantCity, u.MerchantCity}} {
		if f.from == nil {
			continue
		}
		if strings.TrimSpace(*f.from) == "" { // on create "" means a default; here it would replace a value
			return Company{}, nil, invalid(f.field, "%s must not be empty: leave it out to keep the company's", f.field)
		}
		*f.to = *f.from
	}
	if u.FeePolicy != nil {
		p.FeePolicy = u.FeePolicy
	}
	if u.CashbackPolicy != nil {
		p.CashbackPolicy = u.CashbackPolicy
	}
	if u.WithdrawalPolicy != nil {
		p.WithdrawalPolicy = u.WithdrawalPolicy
	}
	p.TaxID = taxID
	next, err := p.build(c.ID, c.CreatedAt, t.svc.core.ids)
	if err != nil {
		return Company{}, nil, err
	}
	if taxID == "" {
		next.TaxID = c.TaxID
	}
	next.PartnerID, next.UpdatedAt = c.PartnerID, t.now
	changed := companyChanges(c, next)
	if len(changed) == 0 && !always {
		return c, nil, nil
	}
	if next.PixKey != c.PixKey {
		if err := t.pixKeyFree("pixKey", next.PixKey, true); err != nil {
			return Company{}, nil, err // the default account's key must stay its own
		}
		if err := t.releasePixKey(c.PixKey); err != nil {
			return Company{}, nil, err
		}
		if err := t.claimPixKey("pixKey", next.PixKey, pixKeyOwner{Kind: keyOfCompany}); err != nil {
			return Company{}, nil, err // another company's key
		}
	}
	r, err := encode(c.ID, next, nil, []store.Index{byCreation(c.CreatedAt)})
	if err != nil {
		return Company{}, nil, err
	}
	if err := storeErr(t.tx.Put(collCompanies, systemSpace, r), "company"); err != nil {
		return Company{}, nil, err
	}
	return next, changed, nil
}

// companyChanges names the fields of the company whose value differs from was to now.
func companyChanges(was, now Company) []string {
	var out []string
	for _, f := range []struct {
		name string
		same bool
	}{
		{"name", was.Name == now.Name},
		{"taxID", samePtr(was.TaxID, now.TaxID)},
		{"pixKey", was.PixKey == now.PixKey},
		{"merchantName", was.MerchantName == now.MerchantName},
		{"merchantCity", was.MerchantCity == now.MerchantCity},
		{"feePolicy", samePtr(was.FeePolicy, now.FeePolicy)},
		{"cashbackPolicy", samePtr(was.CashbackPolicy, now.CashbackPolicy)},
		{"withdrawalPolicy", samePtr(was.WithdrawalPolicy, now.WithdrawalPolicy)},
	} {
		if !f.same {
			out = append(out, f.name)
		}
	}
	return out
}

// samePtr reports whether a and b are both nil or point to equal values.
func samePtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
