package payments

import (
	"context"
	"strings"
	"time"

	"github.com/pixfoundry/payments/store"
)

const collCustomers = "customers"

// Customer is a payer the company knows. Identified by its correlationID (generated when
// not given) and, when it has one, by its tax ID: both are unique within the company.
type Customer struct {
	ID            string    `json:"-"`
	Name          string    `json:"name"`
	Email         string    `json:"email"`
	Phone         string    `json:"phone"`
	TaxID         *TaxID    `json:"taxID"` // null when unknown
	CorrelationID string    `json:"correlationID"`
	Address       *Address  `json:"address,omitempty"`
	CreatedAt     time.Time `json:"createdAt,omitzero"`
	UpdatedAt     time.Time `json:"updatedAt,omitzero"`
}

// Address is a postal address. Fields are free text of at most 200 characters.
type Address struct {
	Zipcode      string `json:"zipcode,omitempty"`
	Street       string `json:"street,omitempty"`
	Number       string `json:"number,omitempty"`
	Neighborhood string `json:"neighborhood,omitempty"`
	City         string `json:"city,omitempty"`
	State        string `json:"state,omitempty"`
	Complement   string `json:"complement,omitempty"`
	Country      string `json:"country,omitempty"`
}

// CreateCustomerParams create a customer: a name plus at least one of tax ID, e-mail and
// phone. TaxID is a CPF or CNPJ, masked or not; CorrelationID defaults to a new UUID.
type CreateCustomerParams struct {
	Name          string
	TaxID         string
	Email         string
	Phone         string
	CorrelationID string
	Address       *Address
}

// CustomerUpdate changes a customer; nil fields stay as they are. Address replaces the
// whole address; AddressUpdate changes only the address fields it gives (PATCH
// /customer/{id} uses it, so that {"address":{"number":"2"}} keeps the street). Give one
// of the two, not both.
type CustomerUpdate struct {
	Name          *string
	TaxID         *string
	Email         *string
	Phone         *string
	Address       *Address
	AddressUpdate *AddressUpdate
}

// AddressUpdate changes some fields of an address: nil fields stay as they are, and ""
// clears one.
type AddressUpdate struct {
	Zipcode      *string `json:"zipcode"`
	Street       *string `json:"street"`
	Number       *string `json:"number"`
	Neighborhood *string `json:"neighborhood"`
	City         *string `json:"city"`
	State        *string `json:"state"`
	Complement   *string `json:"complement"`
	Country      *string `json:"country"`
}

// onto is a with the fields of u that are given.
func (u AddressUpdate) onto(a *Address) *Address {
	var out Address
	if a != nil {
		out = *a
	}
	for _, f := range []struct {
		from *string
		to   *string
	}{
		{u.Zipcode, &out.Zipcode}, {u.Street, &out.Street}, {u.Number, &out.Number},
		{u.Neighborhood, &out.Neighborhood}, {u.City, &out.City}, {u.State, &out.State},
		{u.Complement, &out.Complement}, {u.Country, &out.Country},
	} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
	return &out
}

// customer builds a validated customer; field names are prefixed with prefix
// ("" or "customer.") so that a charge's errors point into its customer object.
func (p CreateCustomerParams) customer(t *txn, prefix string) (Customer, error) {
	c := Customer{CreatedAt: t.now, UpdatedAt: t.now}
	var err error
	if c.CorrelationID, err = cleanCorrelationID(prefix+"correlationID", p.CorrelationID, false); err != nil {
		return Customer{}, err
	}
	if c.CorrelationID == "" {
		c.CorrelationID = t.svc.core.ids.uuid()
	}
	u := CustomerUpdate{Name: &p.Name, TaxID: &p.TaxID, Email: &p.Email, Phone: &p.Phone, Address: p.Address}
	if err := u.apply(prefix, &c); err != nil {
		return Customer{}, err
	}
	return c, nil
}

// apply validates the update's fields and writes them into c, then checks the whole.
func (u CustomerUpdate) apply(prefix string, c *Customer) error {
	var err error
	if u.Name != nil {
		if c.Name, err = cleanString(prefix+"name", *u.Name, 200); err != nil {
			return err
		}
	}
	if u.TaxID != nil {
		c.TaxID = nil
		if *u.TaxID != "" {
			if c.TaxID, err = parseTaxID(prefix+"taxID", *u.TaxID); err != nil {
				return err
			}
		}
	}
	if u.Email != nil {
		if c.Email, err = cleanEmail(prefix+"email", *u.Email); err != nil {
			return err
		}
	}
	if u.Phone != nil {
		if c.Phone, err = cleanPhone(prefix+"phone", *u.Phone); err != nil {
			return err
		}
	}
	if u.Address != nil && u.AddressUpdate != nil {
		return invalid(prefix+"address", "give Address or AddressUpdate, not both")
	}
	if u.AddressUpdate != nil {
		u.Address = u.AddressUpdate.onto(c.Address)
	}
	if u.Address != nil {
		if c.Address, err = u.Address.clean(prefix + "address."); err != nil {
			return err
		}
	}
	if c.Name == "" {
		return invalid(prefix+"name", "%sname is required", prefix)
	}
	if c.TaxID == nil && c.Email == "" && c.Phone == "" {
		return invalid(prefix+"taxID", "%s needs a taxID, an email or a phone besides the name", customerNoun(prefix))
	}
	return nil
}

func customerNoun(prefix string) string {
	if prefix == "" {
		return "customer"
	}
	return prefix[:len(prefix)-1]
}

func (a *Address) clean(prefix string) (*Address, error) {
	out := *a
	for _, f := range []struct {
		name string
		v    *string
	}{
		{"zipcode", &out.Zipcode}, {"street", &out.Street}, {"number", &out.Number},
		{"neighborhood", &out.Neighborhood}, {"city", &out.City}, {"state", &out.State},
		{"complement", &out.Complement}, {"country", &out.Country},
	} {
		v, err := cleanString(prefix+f.name, *f.v, 200)
		if err != nil {
			return nil, err
		}
		*f.v = v
	}
	if out == (Address{}) {
		return nil, nil
	}
	return &out, nil
}

func (c Customer) keys() []string {
	keys := []string{correlationKey(c.CorrelationID)}
	if c.TaxID != nil {
		keys = append(keys, "taxID:"+c.TaxID.TaxID)
	}
	return keys
}

// indexes are the customer's creation order and, for a charge's customer named by its
// e-mail or phone alone (linkCustomer), its e-mail and its phone: oldest first, so the
// first one with that e-mail is the one found. They are not unique keys: two customers
// may share an e-mail.
func (c Customer) indexes() []store.Index {
	ix := []store.Index{byCreation(c.CreatedAt)}
	if c.Email != "" {
		ix = append(ix, store.Index{Name: customerEmailIndex(c.Email), Sort: sortTime(c.CreatedAt)})
	}
	if c.Phone != "" {
		ix = append(ix, store.Index{Name: customerPhoneIndex(c.Phone), Sort: sortTime(c.CreatedAt)})
	}
	return ix
}

func customerEmailIndex(email string) string { return "email:" + strings.ToLower(email) }

func customerPhoneIndex(phone string) string { return "phone:" + phone }

// firstCustomerIn is the oldest customer in the index named index; ok is false when none.
func (t *txn) firstCustomerIn(index string) (c Customer, ok bool, err error) {
	p, err := t.tx.List(collCustomers, t.company, store.Query{Index: index, Limit: 1, NoTotal: true})
	if err != nil || len(p.Records) == 0 {
		return Customer{}, false, internal(err)
	}
	if err := decode(p.Records[0], &c); err != nil {
		return Customer{}, false, err
	}
	c.ID = p.Records[0].ID
	return c, true, nil
}

// migrateCustomerIndexes saves every customer again, once per database, so that customers
// from before the e-mail and phone indexes are found by them.
func (s *Service) migrateCustomerIndexes(ctx context.Context) error {
	return s.migrateOnce(ctx, migrationCustomerIndex1, func(co *Service) error {
		return eachBatch(ctx, co, collCustomers, indexAll, func(t *txn, id string, c *Customer) error {
			return t.put(collCustomers, id, "customer", c, c.keys(), c.indexes())
		})
	})
}

// CreateCustomer creates a customer. A correlationID or tax ID already used by another
// customer of the company is a conflict.
func (s *Service) CreateCustomer(ctx context.Context, p CreateCustomerParams) (Customer, error) {
	var c Customer
	err := s.update(ctx, func(t *txn) error {
		var err error
		c, err = t.createCustomer("", p)
		return err
	})
	return c, err
}

func (t *txn) createCustomer(prefix string, p CreateCustomerParams) (Customer, error) {
	c, err := p.customer(t, prefix)
	if err != nil {
		return Customer{}, err
	}
	c.ID = t.newID()
	if err := t.insert(collCustomers, c.ID, "customer", c, c.keys(), c.indexes()); err != nil {
		return Customer{}, t.customerConflict(err, prefix, c)
	}
	return c, nil
}

// customerConflict says which unique field of c is taken, with its value.
func (t *txn) customerConflict(err error, prefix string, c Customer) error {
	switch {
	case ErrorCode(err) != ECONFLICT:
		return err
	case ErrorField(err) == "correlationID":
		return conflict(prefix+"correlationID", "a customer with correlationID %q already exists", c.CorrelationID)
	case ErrorField(err) == "taxID" && c.TaxID != nil:
		return conflict(prefix+"taxID", "a customer with taxID %s already exists", c.TaxID.TaxID)
	default:
		return err
	}
}

// GetCustomer returns the customer with the correlationID or tax ID id.
func (s *Service) GetCustomer(ctx context.Context, id string) (Customer, error) {
	var c Customer
	err := s.view(ctx, func(t *txn) error {
		var err error
		c, err = t.findCustomer(id)
		return err
	})
	return c, err
}

func (t *txn) findCustomer(id string) (Customer, error) {
	var c Customer
	rid, err := t.getByKey(collCustomers, correlationKey(id), "customer", &c)
	if ok, err2 := found(err); err2 != nil || ok {
		c.ID = rid
		return c, err2
	}
	if tid, _, err := parseTaxIDQuiet(id); err == nil {
		rid, err = t.getByKey(collCustomers, "taxID:"+tid, "customer", &c)
		c.ID = rid
		return c, err
	}
	return Customer{}, notFound("Customer not found")
}

// ListCustomers returns the company's customers, newest first.
func (s *Service) ListCustomers(ctx context.Context, p ListParams) ([]Customer, PageInfo, error) {
	p, err := p.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	var out []Customer
	var total int
	err = s.view(ctx, func(t *txn) error {
		out, total, err = list(t, collCustomers, p.query(indexAll), func(c *Customer, id string) { c.ID = id })
		return err
	})
	return out, p.info(total), err
}

// UpdateCustomer changes the customer with correlationID; fields left nil stay unchanged.
func (s *Service) UpdateCustomer(ctx context.Context, correlationID string, u CustomerUpdate) (Customer, error) {
	var c Customer
	err := s.update(ctx, func(t *txn) error {
		c = Customer{} // decoded afresh on every run: the store may run this function again
		rid, err := t.getByKey(collCustomers, correlationKey(correlationID), "customer", &c)
		if err != nil {
			return err
		}
		c.ID = rid
		if err := u.apply("", &c); err != nil {
			return err
		}
		c.UpdatedAt = t.now
		if err := t.put(collCustomers, c.ID, "customer", c, c.keys(), c.indexes()); err != nil {
			return t.customerConflict(err, "", c)
		}
		return nil
	})
	return c, err
}

// linkCustomer finds the customer with the params' correlationID or tax ID, or creates it.
// The charge carries the customer as sent for this charge (name, e-mail, phone, address),
// under the stored customer's correlationID; linking does not rewrite the stored customer.
// A tax ID sent with the correlationID of a customer must be that customer's, and not
// another's: otherwise (ECONFLICT on customer.taxID) the charge would be listed as one
// customer's while carrying the tax ID of another, which payer checks and cashback read.
func (t *txn) linkCustomer(p CreateCustomerParams) (Customer, error) {
	cand, err := p.customer(t, "customer.")
	if err != nil {
		return Customer{}, err
	}
	var keys []string
	if p.CorrelationID != "" {
		keys = append(keys, correlationKey(cand.CorrelationID))
	}
	if cand.TaxID != nil {
		keys = append(keys, "taxID:"+cand.TaxID.TaxID)
	}
	for _, key := range keys {
		existing, err := t.findCustomerByKey(key)
		if ok, err := found(err); err != nil {
			return Customer{}, err
		} else if !ok {
			continue
		}
		if err := t.sameTaxID(existing, cand.TaxID); err != nil {
			return Customer{}, err
		}
		cand.ID, cand.CorrelationID = existing.ID, existing.CorrelationID
		if cand.TaxID == nil {
			cand.TaxID = existing.TaxID
		}
		return cand.snapshot(), nil
	}
	if p.CorrelationID == "" && cand.TaxID == nil {
		// Named by e-mail or phone alone: the customer who has it already, the oldest if
		// several do, rather than a new copy for every charge.
		for _, index := range []string{customerEmailIndex(cand.Email), customerPhoneIndex(cand.Phone)} {
			if index == customerEmailIndex("") || index == customerPhoneIndex("") {
				continue
			}
			existing, ok, err := t.firstCustomerIn(index)
			if err != nil {
				return Customer{}, err
			}
			if ok {
				cand.ID, cand.CorrelationID, cand.TaxID = existing.ID, existing.CorrelationID, existing.TaxID
				return cand.snapshot(), nil
			}
		}
	}
	c, err := t.createCustomer("customer.", p)
	return c.snapshot(), err
}

// sameTaxID checks that the tax ID sent for a charge's customer, if any, can be the tax ID
// of the stored customer existing: its own, or, when it has none, no other customer's.
func (t *txn) sameTaxID(existing Customer, sent *TaxID) error {
	switch {
	case sent == nil:
		return nil
	case existing.TaxID != nil:
		if existing.TaxID.TaxID != sent.TaxID {
			return conflict("customer.taxID", "customer %q has another taxID than %s", existing.CorrelationID, sent.TaxID)
		}
		return nil
	}
	other, err := t.findCustomerByKey("taxID:" + sent.TaxID)
	if ok, err := found(err); err != nil || !ok {
		return err
	}
	if other.ID != existing.ID {
		return conflict("customer.taxID", "taxID %s is customer %q's, not %q's", sent.TaxID, other.CorrelationID, existing.CorrelationID)
	}
	return nil
}

func (t *txn) findCustomerByKey(key string) (Customer, error) {
	var c Customer
	id, err := t.getByKey(collCustomers, key, "customer", &c)
	c.ID = id
	return c, err
}

// snapshot is the customer as a charge carries it.
func (c Customer) snapshot() Customer {
	c.CreatedAt, c.UpdatedAt = time.Time{}, time.Time{}
	return c
}
