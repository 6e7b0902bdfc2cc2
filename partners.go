package payments

import (
	"context"
	"time"

	"github.com/pixfoundry/payments/store"
)

// Pre-registrations live in the space of the partner that made them, unique by the tax ID
// of the pre-registered company ("taxID:<id>") and listed by creation.
const collPreRegistrations = "preregistrations"

// CreatePreRegistrationParams pre-register a company: its name and tax ID (CPF or CNPJ,
// masked or not) are required; the website and the user's fields are optional but checked
// when given. Errors name fields as the wire body nests them: "preRegistration.taxID", "user.email".
type CreatePreRegistrationParams struct {
	Name    string
	TaxID   string
	Website string
	User    PreRegistrationUser
}

// PreRegistrationParams is the former name of CreatePreRegistrationParams.
//
// Deprecated: use CreatePreRegistrationParams.
type PreRegistrationParams = CreatePreRegistrationParams

// PreRegistrationUser is the person who will manage a pre-registered company.
type PreRegistrationUser struct {
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Email     string `json:"email"`
	Phone     string `json:"phone"`
}

// PreRegistrationDetails are the pre-registered company's data as the partner gave them.
type PreRegistrationDetails struct {
	Name    string `json:"name"`
	Website string `json:"website"`
	TaxID   TaxID  `json:"taxID"`
}

// CompanyRef identifies a company in another resource: {id, name, taxID}.
type CompanyRef struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	TaxID *TaxID `json:"taxID,omitempty"`
}

// PreRegistrationAccount carries the clientId of the pre-registered company's first
// application; empty until the partner creates one.
type PreRegistrationAccount struct {
	ClientID string `json:"clientId,omitempty"`
}

// PreRegistration is a company a partner pre-registered. Its JSON is the wire's read shape:
// {preRegistration:{name,website,taxID}, user, company:{id,name,taxID}, account:{clientId}}.
type PreRegistration struct {
	Details   PreRegistrationDetails `json:"preRegistration"`
	User      PreRegistrationUser    `json:"user"`
	Company   CompanyRef             `json:"company"`
	Account   PreRegistrationAccount `json:"account"`
	PartnerID string                 `json:"-"` // the company that pre-registered it
	CreatedAt time.Time              `json:"-"`
}

// preRegistrationRecord is a pre-registration as stored; Account is derived on read.
type preRegistrationRecord struct {
	Details   PreRegistrationDetails `json:"preRegistration"`
	User      PreRegistrationUser    `json:"user"`
	Company   CompanyRef             `json:"company"`
	PartnerID string                 `json:"partnerID"`
	CreatedAt time.Time              `json:"createdAt"`
}

func (p CreatePreRegistrationParams) check() (PreRegistrationDetails, PreRegistrationUser, error) {
	var d PreRegistrationDetails
	var u PreRegistrationUser
	var err error
	if d.Name, err = cleanString("preRegistration.name", p.Name, 200); err != nil {
		return d, u, err
	}
	if d.Name == "" {
		return d, u, invalid("preRegistration.name", "preRegistration.name is required")
	}
	if err := checkBRCodeText("preRegistration.name", d.Name); err != nil { // the company's merchant name
		return d, u, err
	}
	if p.TaxID == "" {
		return d, u, invalid("preRegistration.taxID", "preRegistration.taxID is required")
	}
	tid, err := parseTaxID("preRegistration.taxID", p.TaxID)
	if err != nil {
		return d, u, err
	}
	d.TaxID = *tid
	if d.Website, err = cleanString("preRegistration.website", p.Website, 200); err != nil {
		return d, u, err
	}
	if u.FirstName, err = cleanString("user.firstName", p.User.FirstName, 100); err != nil {
		return d, u, err
	}
	if u.LastName, err = cleanString("user.lastName", p.User.LastName, 100); err != nil {
		return d, u, err
	}
	if u.Email, err = cleanEmail("user.email", p.User.Email); err != nil {
		return d, u, err
	}
	if u.Phone, err = cleanPhone("user.phone", p.User.Phone); err != nil {
		return d, u, err
	}
	return d, u, nil
}

// preRegistration reads the caller's pre-registration of the company with tax ID taxID.
func (t *txn) preRegistration(taxID string) (PreRegistration, error) {
	r, err := t.tx.GetByKey(collPreRegistrations, t.company, "taxID:"+taxID)
	if err != nil {
		return PreRegistration{}, storeErr(err, "pre-registration")
	}
	return t.readPreRegistration(r)
}

// readPreRegistration decodes a stored pre-registration and derives its account.
func (t *txn) readPreRegistration(r store.Record) (PreRegistration, error) {
	var rec preRegistrationRecord
	if err := decode(r, &rec); err != nil {
		return PreRegistration{}, err
	}
	clientID, err := t.firstApplication(rec.Company.ID)
	if err != nil {
		return PreRegistration{}, err
	}
	return PreRegistration{
		Details: rec.Details, User: rec.User, Company: rec.Company,
		Account: PreRegistrationAccount{ClientID: clientID}, PartnerID: rec.PartnerID, CreatedAt: rec.CreatedAt,
	}, nil
}

// CreatePreRegistration pre-registers a company with this one, which must be a partner
// (EFORBIDDEN otherwise), as its partner. It creates the company (with the default data
// every company gets; act for it with Company or its App ID) and records the
// pre-registration.
//
// It is idempotent by tax ID: when the caller already pre-registered that tax ID, it
// returns the stored pre-registration unchanged and created is false.
func (s *Service) CreatePreRegistration(ctx context.Context, p CreatePreRegistrationParams) (pr PreRegistration, created bool, err error) {
	err = s.update(ctx, func(t *txn) error {
		pr, created = PreRegistration{}, false // afresh on every run: the store may run this function again
		if err := t.requirePartner(); err != nil {
			return err
		}
		details, user, err := p.check()
		if err != nil {
			return err
		}
		pr, err = t.preRegistration(details.TaxID.TaxID)
		if ok, err := found(err); err != nil || ok {
			return err
		}
		c, err := t.registerCompany(CreateCompanyParams{Name: details.Name, TaxID: details.TaxID.TaxID})
		if err != nil {
			return err
		}
		rec := preRegistrationRecord{
			Details: details, User: user, Company: CompanyRef{ID: c.ID, Name: c.Name, TaxID: c.TaxID},
			PartnerID: t.company, CreatedAt: t.now,
		}
		key := []string{"taxID:" + details.TaxID.TaxID}
		if err := t.insert(collPreRegistrations, t.newID(), "pre-registration", rec, key, []store.Index{byCreation(t.now)}); err != nil {
			return err
		}
		pr = PreRegistration{Details: rec.Details, User: rec.User, Company: rec.Company, PartnerID: rec.PartnerID, CreatedAt: rec.CreatedAt}
		created = true
		return nil
	})
	if err != nil {
		return PreRegistration{}, false, err
	}
	return pr, created, nil
}

// GetPreRegistration returns the caller's pre-registration of the company with tax ID
// taxID (masked or not). Only a partner may call it, and it sees only its own.
func (s *Service) GetPreRegistration(ctx context.Context, taxID string) (PreRegistration, error) {
	tid, err := parseTaxID("taxID", taxID)
	if err != nil {
		return PreRegistration{}, err
	}
	var pr PreRegistration
	err = s.view(ctx, func(t *txn) error {
		if err := t.requirePartner(); err != nil {
			return err
		}
		pr, err = t.preRegistration(tid.TaxID)
		return err
	})
	return pr, err
}

// ListPreRegistrations returns the caller's pre-registrations, newest first. Only a
// partner may call it.
func (s *Service) ListPreRegistrations(ctx context.Context, p ListParams) ([]PreRegistration, PageInfo, error) {
	p, err := p.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	var out []PreRegistration
	var total int
	err = s.view(ctx, func(t *txn) error {
		if err := t.requirePartner(); err != nil {
			return err
		}
		page, err := t.tx.List(collPreRegistrations, t.company, p.query(indexAll))
		if err != nil {
			return internal(err)
		}
		total = page.Total
		out = make([]PreRegistration, 0, len(page.Records))
		for _, r := range page.Records {
			pr, err := t.readPreRegistration(r)
			if err != nil {
				return err
			}
			out = append(out, pr)
		}
		return nil
	})
	return out, p.info(total), err
}

// CreatePartnerApplication creates API credentials for a company the caller (a partner;
// EFORBIDDEN otherwise) pre-registered with tax ID taxID (ENOTFOUND when it did not).
//
// It is idempotent by name: when that company already has an application named p.Name, it
// returns that application with created false and without ClientSecret, since the secret
// is stored only as a hash and cannot be shown again. (The real API answers 200 in that
// case and 201 for a new application.)
func (s *Service) CreatePartnerApplication(ctx context.Context, taxID string, p CreateApplicationParams) (a Application, created bool, err error) {
	err = s.update(ctx, func(t *txn) error {
		a, created = Application{}, false // afresh on every run: the store may run this function again
		if err := t.requirePartner(); err != nil {
			return err
		}
		p, err := p.check()
		if err != nil {
			return err
		}
		if taxID == "" {
			return invalid("taxID", "taxID is required")
		}
		tid, err := parseTaxID("taxID", taxID)
		if err != nil {
			return err
		}
		pr, err := t.preRegistration(tid.TaxID)
		if err != nil {
			return err
		}
		existing, err := t.applicationByName(pr.Company.ID, p.Name)
		if ok, err := found(err); err != nil || ok {
			a = existing.application()
			return err
		}
		a, err = t.createApplication(pr.Company.ID, p)
		created = err == nil
		return err
	})
	if err != nil {
		return Application{}, false, err
	}
	return a, created, nil
}
