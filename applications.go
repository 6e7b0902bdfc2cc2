package payments

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/pixfoundry/payments/store"
)

// Applications live in the system space, like companies, so that Authenticate can find the
// company of any App ID. Unique keys: "clientId:<clientId>" and "name:<companyID>:<name>"
// (company ids never contain ':'); each company's applications are listed by the index
// "company:<companyID>".
const collApplications = "applications"

// ApplicationType is the kind of an application, as the real API names them. Every type
// gets an App ID that authenticates the same way here; the type is recorded and shown.
type ApplicationType string

// Application types.
const (
	ApplicationAPI    ApplicationType = "API"    // server-to-server access with an App ID
	ApplicationPlugin ApplicationType = "PLUGIN" // an e-commerce platform plugin
	ApplicationOracle ApplicationType = "ORACLE" // an ERP integration
)

// Lengths of generated credentials.
const (
	clientIDPrefix     = "Client_Id_"
	clientSecretPrefix = "Client_Secret_"
	secretBytes        = 32
	maxAppIDLen        = 1024 // longer Authorization values are rejected before decoding
)

// Application is a set of API credentials of a company. Its App ID, sent raw in the
// Authorization header, is base64(clientId:clientSecret).
//
// ClientSecret is set only in the value returned when the application is created: the
// secret is stored as a hash and can never be shown again.
type Application struct {
	Name         string          `json:"name"`
	Type         ApplicationType `json:"type"`
	IsActive     bool            `json:"isActive"`
	ClientID     string          `json:"clientId"`
	ClientSecret string          `json:"clientSecret,omitempty"`
	CreatedAt    time.Time       `json:"createdAt"`
}

// AppID returns the value a client sends in the Authorization header,
// base64(clientId:clientSecret), or "" when the secret is not known (any application
// other than the one just created).
func (a Application) AppID() string {
	if a.ClientSecret == "" {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(a.ClientID + ":" + a.ClientSecret))
}

// CreateApplicationParams create an application. Name is required and unique within the
// company; Type defaults to ApplicationAPI and may be any of the ApplicationTypes (in any
// case). Errors name the fields
// "application.name" and "application.type", as the wire body nests them.
type CreateApplicationParams struct {
	Name string
	Type ApplicationType
}

// ApplicationParams is the former name of CreateApplicationParams.
//
// Deprecated: use CreateApplicationParams.
type ApplicationParams = CreateApplicationParams

func (p CreateApplicationParams) check() (CreateApplicationParams, error) {
	name, err := cleanString("application.name", p.Name, 200)
	if err != nil {
		return p, err
	}
	if name == "" {
		return p, invalid("application.name", "application.name is required")
	}
	p.Name = name
	switch t := ApplicationType(strings.ToUpper(strings.TrimSpace(string(p.Type)))); t {
	case "":
		p.Type = ApplicationAPI
	case ApplicationAPI, ApplicationPlugin, ApplicationOracle:
		p.Type = t
	default:
		return p, invalid("application.type", "application.type must be %s, %s or %s", ApplicationAPI, ApplicationPlugin, ApplicationOracle)
	}
	return p, nil
}

// applicationRecord is an application as stored: the secret only as its hash.
type applicationRecord struct {
	CompanyID  string          `json:"companyID"`
	Name       string          `json:"name"`
	Type       ApplicationType `json:"type"`
	IsActive   bool            `json:"isActive"`
	ClientID   string          `json:"clientId"`
	SecretHash string          `json:"secretHash"` // hex SHA-256 of the client secret
	CreatedAt  time.Time       `json:"createdAt"`
	UpdatedAt  time.Time       `json:"updatedAt"`
}

func (a applicationRecord) application() Application {
	return Application{Name: a.Name, Type: a.Type, IsActive: a.IsActive, ClientID: a.ClientID, CreatedAt: a.CreatedAt}
}

func (a applicationRecord) keys() []string {
	return []string{"clientId:" + a.ClientID, appNameKey(a.CompanyID, a.Name)}
}

func (a applicationRecord) indexes() []store.Index {
	return []store.Index{{Name: appCompanyIndex(a.CompanyID), Sort: sortTime(a.CreatedAt)}}
}

func appNameKey(companyID, name string) string { return "name:" + companyID + ":" + name }
func appCompanyIndex(companyID string) string  { return "company:" + companyID }

// hashSecret is the stored form of a client secret. A plain SHA-256 is enough here, unlike
// for passwords: the secret is 32 random bytes, so there is nothing to guess and no need for
// a slow, salted hash.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// CreateApplication creates API credentials for this Service's company and returns them
// with the client secret, which is shown this once. Names are unique within a company: a
// taken name is a conflict.
func (s *Service) CreateApplication(ctx context.Context, p CreateApplicationParams) (Application, error) {
	p, err := p.check()
	if err != nil {
		return Application{}, err
	}
	var a Application
	err = s.update(ctx, func(t *txn) error {
		var err error
		a, err = t.createApplication(t.company, p)
		return err
	})
	return a, err
}

// createApplication stores a new application of companyID; p must be checked.
func (t *txn) createApplication(companyID string, p CreateApplicationParams) (Application, error) {
	var raw [secretBytes]byte
	t.svc.core.ids.read(raw[:])
	secret := clientSecretPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	rec := applicationRecord{
		CompanyID: companyID, Name: p.Name, Type: p.Type, IsActive: true,
		ClientID: clientIDPrefix + t.svc.core.ids.uuid(), SecretHash: hashSecret(secret),
		CreatedAt: t.now, UpdatedAt: t.now,
	}
	r, err := encode(t.newID(), rec, rec.keys(), rec.indexes())
	if err != nil {
		return Application{}, err
	}
	if err := storeErr(t.tx.Insert(collApplications, systemSpace, r), "application"); err != nil {
		if ErrorField(err) == "name" {
			return Application{}, conflict("application.name", "an application named %q already exists", p.Name)
		}
		return Application{}, err
	}
	a := rec.application()
	a.ClientSecret = secret
	return a, nil
}

// applicationByName returns the application of companyID named name.
func (t *txn) applicationByName(companyID, name string) (applicationRecord, error) {
	var a applicationRecord
	r, err := t.tx.GetByKey(collApplications, systemSpace, appNameKey(companyID, name))
	if err != nil {
		return a, storeErr(err, "application")
	}
	return a, decode(r, &a)
}

// firstApplication returns the clientId of the oldest application of companyID, or "".
func (t *txn) firstApplication(companyID string) (string, error) {
	page, err := t.tx.List(collApplications, systemSpace, store.Query{Index: appCompanyIndex(companyID), Limit: 1})
	if err != nil {
		return "", internal(err)
	}
	if len(page.Records) == 0 {
		return "", nil
	}
	var a applicationRecord
	if err := decode(page.Records[0], &a); err != nil {
		return "", err
	}
	return a.ClientID, nil
}

// ListApplications returns this company's applications, newest first, without secrets.
func (s *Service) ListApplications(ctx context.Context, p ListParams) ([]Application, PageInfo, error) {
	p, err := p.check()
	if err != nil {
		return nil, PageInfo{}, err
	}
	var out []Application
	var total int
	err = s.view(ctx, func(t *txn) error {
		q := p.query(appCompanyIndex(t.company))
		page, err := t.tx.List(collApplications, systemSpace, q)
		if err != nil {
			return internal(err)
		}
		total = page.Total
		out = make([]Application, 0, len(page.Records))
		for _, r := range page.Records {
			var a applicationRecord
			if err := decode(r, &a); err != nil {
				return err
			}
			out = append(out, a.application())
		}
		return nil
	})
	return out, p.info(total), err
}

// DeactivateApplication turns off the application of this company with clientID: its App
// ID stops authenticating. The record stays, so its name remains taken. The company's last
// active application cannot be deactivated (EPRECONDITION on "clientId"): that would lock
// the company out of the API; create another one first. An inactive one stays inactive.
func (s *Service) DeactivateApplication(ctx context.Context, clientID string) (Application, error) {
	var a applicationRecord
	var wrote bool // some run of the function wrote the deactivation
	err := s.update(ctx, func(t *txn) error {
		a = applicationRecord{} // decoded afresh on every run: the store may run this function again
		r, err := t.tx.GetByKey(collApplications, systemSpace, "clientId:"+clientID)
		if err != nil {
			return storeErr(err, "application")
		}
		if err := decode(r, &a); err != nil {
			return err
		}
		if a.CompanyID != t.company {
			return notFound("Application not found") // another company's: not visible here
		}
		if !a.IsActive {
			return nil
		}
		// Counted in this transaction, so two concurrent deactivations of the last two
		// leave one.
		if other, err := t.otherActiveApplication(a.CompanyID, a.ClientID); err != nil {
			return err
		} else if !other {
			return precondition("clientId", "this is the company's last active application: create another one before deactivating it, or the company loses access to the API")
		}
		a.IsActive = false
		a.UpdatedAt = t.now
		r, err = encode(r.ID, a, a.keys(), a.indexes())
		if err != nil {
			return err
		}
		wrote = true
		return storeErr(t.tx.Put(collApplications, systemSpace, r), "application")
	})
	// Once the deactivation was written, whatever the outcome (a failed commit may still
	// have landed), no cached App ID outlives this call (applications_cache.go). A call
	// that wrote nothing (an unknown or another company's clientId, the last active
	// application, one inactive already) leaves the cache alone: otherwise any client
	// could empty every company's cache at will.
	if wrote {
		authEpoch.Add(1)
	}
	if err != nil {
		return Application{}, err
	}
	return a.application(), nil
}

// otherActiveApplication reports whether companyID has an active application other than
// clientID.
func (t *txn) otherActiveApplication(companyID, clientID string) (bool, error) {
	const page = 100
	for skip := 0; ; skip += page {
		p, err := t.tx.List(collApplications, systemSpace, store.Query{Index: appCompanyIndex(companyID), Skip: skip, Limit: page})
		if err != nil {
			return false, internal(err)
		}
		for _, r := range p.Records {
			var a applicationRecord
			if err := decode(r, &a); err != nil {
				return false, err
			}
			if a.IsActive && a.ClientID != clientID {
				return true, nil
			}
		}
		if len(p.Records) < page {
			return false, nil
		}
	}
}

// Authenticate resolves an App ID, base64(clientId:clientSecret) as sent in the
// Authorization header, to the Service of the application's company.
//
// It is the entry point of authentication and, by design, the one method that looks
// across companies: it may be called on any Service (typically the default company's, as
// an HTTP adapter holds it) and returns another company's Service when the App ID belongs
// to it. Every failure (malformed value, unknown client, wrong secret, inactive
// application) is the same EUNAUTHORIZED error with a generic message, so a caller cannot
// learn which part was wrong; a store failure is EINTERNAL.
//
// An App ID verified recently is answered from a bounded in-memory cache, emptied when
// DeactivateApplication returns; another process sees a deactivation within authCacheTTL
// (applications_cache.go).
func (s *Service) Authenticate(ctx context.Context, appID string) (*Service, error) {
	var buf [2 * maxAppIDLen]byte // decoded here: an App ID the cache knows costs no allocation but the Service
	client, secret, ok := parseAppID(&buf, appID)
	if !ok {
		return nil, unauthorized()
	}
	secretHash := sha256.Sum256(secret)
	now := s.now()
	if companyID, ok := s.core.auth.lookup(client, secretHash, now); ok {
		return &Service{core: s.core, company: companyID}, nil
	}
	clientID := string(client)
	companyID, err := s.authenticateStored(ctx, clientID, secretHash, now)
	if err != nil {
		return nil, err
	}
	return &Service{core: s.core, company: companyID}, nil
}

// authenticateStored is Authenticate for an App ID the cache does not hold: the company of
// clientID's application when secretHash is its secret's, read from the store and then
// cached.
func (s *Service) authenticateStored(ctx context.Context, clientID string, secretHash [sha256.Size]byte, now time.Time) (string, error) {
	epoch := authEpoch.Load() // before the read: a deactivation after it makes the entry stale
	var companyID string
	err := s.view(ctx, func(t *txn) error {
		var a applicationRecord
		r, err := t.tx.GetByKey(collApplications, systemSpace, "clientId:"+clientID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			a.SecretHash = hashSecret("") // compare anyway: unknown clients take as long as wrong secrets
		case err != nil:
			return internal(err)
		default:
			if err := decode(r, &a); err != nil {
				return err
			}
		}
		got := hex.EncodeToString(secretHash[:])
		if subtle.ConstantTimeCompare([]byte(got), []byte(a.SecretHash)) != 1 || !a.IsActive {
			return unauthorized()
		}
		if _, err := t.tx.Get(collCompanies, systemSpace, a.CompanyID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return unauthorized()
			}
			return internal(err)
		}
		companyID = a.CompanyID
		return nil
	})
	if err != nil {
		return "", err
	}
	s.core.auth.add(clientID, secretHash, companyID, now, epoch)
	return companyID, nil
}

// parseAppID splits an App ID into client id and secret, both in buf (the App ID copied
// to its first half, decoded into its second). It accepts standard base64 with or without
// padding, and surrounding spaces.
func parseAppID(buf *[2 * maxAppIDLen]byte, appID string) (clientID, secret []byte, ok bool) {
	appID = strings.TrimSpace(appID)
	if appID == "" || len(appID) > maxAppIDLen {
		return nil, nil, false
	}
	src := append(buf[:0:maxAppIDLen], strings.TrimRight(appID, "=")...)
	raw, err := base64.RawStdEncoding.AppendDecode(buf[maxAppIDLen:maxAppIDLen], src)
	if err != nil {
		return nil, nil, false
	}
	clientID, secret, ok = bytes.Cut(raw, []byte(":"))
	if !ok || len(clientID) == 0 || len(secret) == 0 {
		return nil, nil, false
	}
	return clientID, secret, true
}

func unauthorized() *Error {
	return &Error{Code: EUNAUTHORIZED, Message: "invalid App ID"}
}
