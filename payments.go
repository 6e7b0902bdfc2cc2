package payments

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pixfoundry/payments/internal/qrpng"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
)

// DefaultVendor is the vendor name in event names and paths ("OPENPIX:CHARGE_CREATED").
const DefaultVendor = "openpix"

// vendorRE is a vendor name (Options.Vendor): lower-case letters and digits, words joined
// by hyphens; maxVendor is its longest.
var vendorRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

const maxVendor = 32

// CheckVendor says whether vendor may be Options.Vendor (EINVALID on "vendor" if not): 1 to
// 32 lower-case letters and digits, words joined by hyphens, since it becomes a path
// segment (/<vendor>/testing, /api/<vendor>/v1) and an event prefix; and not "api", which
// would make /api/<vendor>/v1 and /<vendor>/api/v1, both served by httpadapter, the same.
func CheckVendor(vendor string) error {
	if len(vendor) > maxVendor || !vendorRE.MatchString(vendor) {
		return invalid("vendor", "vendor %q must be 1 to %d lower-case letters and digits, words joined by hyphens, e.g. %s", vendor, maxVendor, DefaultVendor)
	}
	if vendor == "api" {
		return invalid("vendor", `vendor "api" would make the paths /api/<vendor>/v1 and /<vendor>/api/v1 the same`)
	}
	return nil
}

// DefaultCompanyID is the id of the company a Service opened by Open or New acts for.
const DefaultCompanyID = "default"

// Options configure a Service. The zero value works.
type Options struct {
	// Clock gives the time; default the system clock. Tests pass a *ManualClock.
	Clock Clock
	// IDs is the source of every id the Service generates (record ids, transactionIDs,
	// paymentLinkIDs, generated correlationIDs, client ids and secrets, default Pix keys);
	// default crypto/rand.Reader. It must not fail, and it is read under a lock. A test that
	// passes a seeded reader (e.g. math/rand/v2's ChaCha8) and a ManualClock gets
	// byte-identical output; never do that outside tests, since client secrets come from it.
	// So that ids are drawn in the same order every run, a Service given IDs prepares the
	// due pass's charges on one goroutine, and delivers to one webhook at a time unless
	// WebhookConcurrency says otherwise (more makes attempt ids depend on scheduling).
	IDs io.Reader
	// Logger receives operational logs; default discards them.
	Logger *slog.Logger
	// Vendor is the name used in event names and paths; default DefaultVendor. It must be
	// lower-case letters and digits, words joined by hyphens, at most 32 characters, and
	// not "api" (see CheckVendor).
	Vendor string
	// DefaultCompany describes the default company, the one Open and New return the
	// Service of. The first open creates it (a partner) from these fields, empty ones
	// taking CreateCompanyParams' defaults. A later open gives the stored company each field
	// set here whose value differs (an empty field or nil policy keeps the stored value),
	// in one transaction, and logs which fields changed: a host's configuration (a
	// server's -pix-key, -merchant-name …) is what a restart applies. A new PixKey is
	// re-indexed as UpdateCompany does it; one another company holds makes New fail with
	// an ECONFLICT *Error whose Field is "DefaultCompany.PixKey", and the store is left as
	// it was. Charges and QR codes made before keep their BR Codes.
	DefaultCompany CreateCompanyParams
	// Rail is the bank side: it sends Pix out and resolves Pix keys (a driver: see package
	// rail). Nil means the sandbox bank, NewSandboxRail(Clock, 0), which settles every order
	// at once with make-believe money; Service.Sandbox then reports true.
	Rail Rail
	// BankCharges registers every DYNAMIC and OVERDUE charge a caller creates with the bank
	// (Rail must be a rail.Collector; New refuses otherwise): the charge's BR Code is the
	// bank's, and no charge is created that the bank has not registered (see
	// charges_bank.go). False builds every BR Code in process, as a static code with the
	// company's key.
	BankCharges bool
	// MaxSendFailures is how many calls to the Rail about one order may fail in a row before
	// the order is marked stuck (see ListStuckOrders); default DefaultMaxSendFailures. A
	// stuck order is still retried.
	MaxSendFailures int
	// SendTimeout bounds each call to the Rail about an outgoing order (Send or Status);
	// default DefaultSendTimeout. The call does not end with the request that caused it.
	// It bounds a payment's Pix key look-up (ResolveKey) too, which does.
	SendTimeout time.Duration
	// WebhookSender carries webhook deliveries (httpadapter.NewWebhookSender POSTs them);
	// nil means URL webhooks cannot be created and are not delivered; e-mail webhooks
	// (Webhook.Email) need only the Mailer and are still delivered.
	WebhookSender WebhookSender
	// WebhookAttempts is how many times an event is tried per webhook, the first included;
	// default DefaultWebhookAttempts.
	WebhookAttempts int
	// WebhookTimeout bounds one delivery attempt (and the test call on create); default
	// DefaultWebhookTimeout.
	WebhookTimeout time.Duration
	// Mailer sends the e-mails of webhooks whose action is e-mail; default a *MemoryMailer
	// that records them (and logs each to Logger) without sending. SMTPMailer sends.
	Mailer Mailer
	// WebhookConcurrency is how many webhooks a delivery pass serves at once; default
	// DefaultWebhookConcurrency, or 1 when IDs is set.
	WebhookConcurrency int
	// WebhookInFlight is how many events of one webhook are sent at once, at most; default
	// DefaultWebhookInFlight, or 1 when IDs is set. Deliveries to one webhook may then
	// arrive out of outbox order, as with the real API and Standard Webhooks (receivers
	// dedupe and order by webhook-id and the payload). Each delivery starts with one event
	// in flight and allows one more per event delivered; a failure drops it back to one,
	// and while one of a webhook's events waits for a retry its later events wait too. 1
	// sends each webhook's events one at a time, in outbox order.
	WebhookInFlight int
	// OnWebhookAttempt, if set, is called with each delivery attempt once it is recorded
	// (metrics: outcomes "delivered", "retry", "gave_up", "disabled"). It runs on the
	// delivering goroutine and must be quick.
	OnWebhookAttempt func(WebhookAttempt)
	// WebhookSigningKey is the RSA key (2048 bits or more) a store that has no webhook
	// signing key yet starts with, in place of a newly generated one: a key kept in a
	// secrets manager, or one several stores share so that receivers trust one public key.
	// A store that already has its key keeps it: receivers verify with the key it
	// published. Nil generates an RSA-2048 key on first use.
	WebhookSigningKey *rsa.PrivateKey
	// WebhookLease is how long a process that claimed a webhook's next event keeps the
	// other processes sharing the store from delivering to that webhook; if it dies
	// mid-delivery, another delivers once the lease has run out (see RunWebhooks). Default:
	// WebhookTimeout plus a margin on a store several processes share (one with a method
	// Shared() bool answering true, as store/postgres), none on a store one process owns.
	WebhookLease time.Duration
	// MaxWebhooksPerEvent is how many active webhooks a company may have on one event;
	// default DefaultMaxWebhooksPerEvent. CreateWebhook refuses one more (EPRECONDITION).
	MaxWebhooksPerEvent int
	// DueInterval is how often Run does the due work (RunDue); default DefaultDueInterval.
	// Negative turns it off (a process that leaves it to another).
	DueInterval time.Duration
	// WebhookPoll is how often Run's webhook worker looks for retries that fell due when no
	// commit woke it; default DefaultWebhookPoll.
	WebhookPoll time.Duration
	// ReconcileInterval is how often Run reconciles with a Rail that lists what it received
	// (a rail.Collector); default DefaultReconcileInterval. Negative turns it off (a host
	// that reconciles on its own schedule).
	ReconcileInterval time.Duration
}

// Service is the whole platform for one company: every method reads and writes only that
// company's records. Open and New return the Service of the default company; Company
// returns the Service of another. A Service is safe for concurrent use.
//
// The exceptions are the bank's and the operator's calls, which know no company and find
// it themselves, whichever company's Service they are called on: money that arrives
// (ReceiveBankPix, Reconcile, ListUnmatchedPix, AssignUnmatchedPix), what the bank says of
// outgoing orders (RecordSettlement, RecordPayoutReturn), and the orders it has not
// answered (ListStuckOrders, CountStuckOrders). A company's own callers (its App ID, over
// httpadapter) never reach them.
type Service struct {
	core    *core
	company string
	// opened is set on the Service Open returned, the one whose Close closes the store:
	// the Services of other companies (Company, Authenticate) share its store, and closing
	// one of them, as a deferred Close per request would, must not close it for all.
	opened bool
}

// core is what all companies' Services share.
type core struct {
	store     store.Store
	clock     Clock
	ids       *idSource
	log       *slog.Logger
	vendor    string
	pageLinks linksPointer // the Links installed by SetLinks; nil leaves link fields empty
	qr        *qrpng.Renderer
	rail      Rail
	// bank is rail as a rail.Collector when Options.BankCharges is set; nil otherwise.
	bank rail.Collector
	// auth holds the App IDs verified lately (applications_cache.go).
	auth *authCache
	// sendTimeout bounds one Rail call about an order.
	sendTimeout time.Duration
	// pollInterval is how soon an order the bank accepted is asked about again (the Rail's,
	// if it is a rail.Poller); maxSendFailures the failures in a row that make it stuck.
	pollInterval    time.Duration
	maxSendFailures int
	webhooks        *webhookCore
	memo            decodeMemo // hot records decoded (memo.go)
	reads           readSets   // what each company's last charge preparation read (prepare_reads.go)
	seeded          bool       // Options.IDs was given: draw ids in one order (see there)
	// moving is held by AdvanceClock for the whole of a move: moves run one after the
	// other, so that two add up as they would one after the other.
	moving sync.Mutex
	// maxWebhooksPerEvent is Options.MaxWebhooksPerEvent (see Service.maxWebhooksPerEvent).
	maxWebhooksPerEvent int
	// runner holds Run's intervals and whether a Run is going on (run.go).
	runner *runner
}

// Open opens (creating if needed) a bbolt database file at path and returns the Service of
// its default company. Close releases the file.
func Open(path string, opts Options) (*Service, error) {
	st, err := bolt.Open(path)
	if err != nil {
		return nil, err
	}
	svc, err := New(st, opts)
	if err != nil {
		st.Close()
		return nil, err
	}
	svc.opened = true
	return svc, nil
}

// New returns the Service of the default company over any store, creating the default
// company on first use. Closing the Service does not close a store passed to New.
func New(st store.Store, opts Options) (*Service, error) {
	if st == nil {
		return nil, internal(errors.New("payments.New: the store is nil"))
	}
	if k := opts.WebhookSigningKey; k != nil {
		if k.N == nil || k.N.BitLen() < webhookKeyBits || k.Validate() != nil {
			return nil, invalid("WebhookSigningKey", "WebhookSigningKey must be a valid RSA key of at least %d bits", webhookKeyBits)
		}
	}
	c := &core{store: st, clock: opts.Clock, ids: newIDSource(opts.IDs), seeded: opts.IDs != nil, log: opts.Logger, vendor: opts.Vendor,
		qr: qrpng.New(0), rail: opts.Rail,
		webhooks: newWebhookCore(st, opts), auth: newAuthCache(authCacheSize, authCacheTTL), maxWebhooksPerEvent: opts.MaxWebhooksPerEvent,
		runner: newRunner(opts)}
	if c.clock == nil {
		c.clock = SystemClock{}
	}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.vendor == "" {
		c.vendor = DefaultVendor
	}
	if err := CheckVendor(c.vendor); err != nil {
		return nil, err
	}
	if c.rail == nil {
		c.rail = NewSandboxRail(c.clock, 0)
	}
	if opts.BankCharges {
		bank, ok := c.rail.(rail.Collector)
		if !ok {
			return nil, fmt.Errorf("payments: Options.BankCharges needs a Rail that registers charges (a rail.Collector); %T is not one", c.rail)
		}
		c.bank = bank
	}
	c.sendTimeout = opts.SendTimeout
	if c.sendTimeout <= 0 {
		c.sendTimeout = DefaultSendTimeout
	}
	c.pollInterval = rail.DefaultPollInterval
	if p, ok := c.rail.(rail.Poller); ok && p.PollInterval() > 0 {
		c.pollInterval = p.PollInterval()
	}
	c.maxSendFailures = opts.MaxSendFailures
	if c.maxSendFailures <= 0 {
		c.maxSendFailures = DefaultMaxSendFailures
	}
	svc := &Service{core: c, company: DefaultCompanyID}
	if err := svc.ensureDefaultCompany(context.Background(), opts.DefaultCompany); err != nil {
		return nil, err
	}
	if err := svc.migrate(context.Background()); err != nil {
		return nil, err
	}
	return svc, nil
}

// Close releases the store if this Service is the one Open returned; on any other Service
// (one New returned, or one of Company or Authenticate) it does nothing.
func (s *Service) Close() error {
	if s.opened {
		return s.core.store.Close()
	}
	return nil
}

// CompanyID is the id of the company this Service acts for.
func (s *Service) CompanyID() string { return s.company }

// Vendor is the vendor name in event names ("openpix").
func (s *Service) Vendor() string { return s.core.vendor }

// Company returns the Service of the company with id. With Authenticate (for the company
// an App ID belongs to) it is the way to act for another company, so code cannot cross
// companies by mistake. (PayPaymentLink and PaymentLink act for the company a public link
// belongs to.)
func (s *Service) Company(ctx context.Context, id string) (*Service, error) {
	other := &Service{core: s.core, company: id}
	if _, err := other.GetCompany(ctx); err != nil {
		return nil, err
	}
	return other, nil
}

// txn is one Service operation inside one store transaction: the company, the time taken
// once, and typed helpers over the store.
type txn struct {
	svc     *Service
	tx      store.Tx
	company string
	now     time.Time
	// afterCommit runs once the transaction has committed: calls to the outside (the
	// Rail) that must not happen for a transaction that rolls back.
	afterCommit []func(context.Context)
	// preps are charges the due pass prepared before the transaction (prepare.go); read only.
	preps map[prepKey]*chargePrep
	// dueAgain, set by the due pass, is set after the commit when the pass must go round
	// again (expireCompany); nil elsewhere, where nothing reads it.
	dueAgain *atomic.Bool
}

// newID is a new record id: a 24-hex id shaped like the real API's, from the id source.
func (t *txn) newID() string { return t.svc.core.ids.objectID(t.now) }

// after schedules fn to run when the transaction has committed.
func (t *txn) after(fn func(context.Context)) { t.afterCommit = append(t.afterCommit, fn) }

// update runs fn in one write transaction. Every error it returns is an *Error.
func (s *Service) update(ctx context.Context, fn func(*txn) error) error {
	return s.updateAt(ctx, s.now(), fn)
}

// updateAt is update with the transaction's time taken by the caller, for work prepared
// before it at that time.
func (s *Service) updateAt(ctx context.Context, now time.Time, fn func(*txn) error) error {
	var t *txn
	err := s.core.store.Update(ctx, func(tx store.Tx) error {
		t = &txn{svc: s, tx: tx, company: s.company, now: now} // afresh if the store runs fn again
		return fn(t)
	})
	if err != nil {
		return s.finish(err)
	}
	for _, fn := range t.afterCommit {
		fn(ctx)
	}
	return nil
}

// view runs fn in one read transaction.
func (s *Service) view(ctx context.Context, fn func(*txn) error) error {
	now := s.now()
	err := s.core.store.View(ctx, func(tx store.Tx) error {
		return fn(&txn{svc: s, tx: tx, company: s.company, now: now})
	})
	return s.finish(err)
}

func (s *Service) finish(err error) error {
	if err == nil {
		return nil
	}
	err = internal(err)
	if ErrorCode(err) == EINTERNAL {
		s.core.log.Error("operation failed", "company", s.company, "err", err)
	}
	return err
}

// now is the current time in UTC, at millisecond precision like the real API.
func (s *Service) now() time.Time {
	return s.core.clock.Now().UTC().Truncate(time.Millisecond)
}

// get reads the record id of a collection into v.
func (t *txn) get(collection, id, noun string, v any) error {
	r, err := t.tx.Get(collection, t.company, id)
	if err != nil {
		return storeErr(err, noun)
	}
	return decode(r, v)
}

// getByKey reads the record holding a unique key into v and returns its id.
func (t *txn) getByKey(collection, key, noun string, v any) (string, error) {
	r, err := t.tx.GetByKey(collection, t.company, key)
	if err != nil {
		return "", storeErr(err, noun)
	}
	return r.ID, decode(r, v)
}

// result is v, or T's zero value with a non-nil err: a money move builds its record in
// the transaction function before it posts, and the one built before a failure (a balance
// too low, the store's) must not reach the caller looking like a move.
func result[T any](v T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// found reports whether err is nil (true), not found (false), or another error.
func found(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case ErrorCode(err) == ENOTFOUND:
		return false, nil
	default:
		return false, err
	}
}

// insert stores a new record; a taken unique key is a conflict naming conflictField.
func (t *txn) insert(collection, id, noun string, v any, keys []string, indexes []store.Index) error {
	r, err := encode(id, v, keys, indexes)
	if err != nil {
		return err
	}
	return storeErr(t.tx.Insert(collection, t.company, r), noun)
}

// put replaces the record id.
func (t *txn) put(collection, id, noun string, v any, keys []string, indexes []store.Index) error {
	r, err := encode(id, v, keys, indexes)
	if err != nil {
		return err
	}
	return storeErr(t.tx.Put(collection, t.company, r), noun)
}

// list reads one page of an index into a slice of T.
func list[T any](t *txn, collection string, q store.Query, setID func(*T, string)) ([]T, int, error) {
	page, err := t.tx.List(collection, t.company, q)
	if err != nil {
		return nil, 0, internal(err)
	}
	out := make([]T, 0, len(page.Records))
	for _, r := range page.Records {
		var v T
		if err := decode(r, &v); err != nil {
			return nil, 0, internal(err)
		}
		if setID != nil {
			setID(&v, r.ID)
		}
		out = append(out, v)
	}
	return out, page.Total, nil
}

// filterList is list for the values of q's range of which keep keeps: it reads the whole
// range in q's order and pages what it keeps as q asks, counting it. It is for ranges
// that are few by nature (a charge's transactions, an event's delivery attempts), where a
// filter does not need an index of its own.
func filterList[T any](t *txn, collection string, q store.Query, setID func(*T, string), keep func(*T) (bool, error)) ([]T, int, error) {
	skip, limit := q.Skip, q.Limit
	q.Skip, q.Limit, q.NoTotal = 0, MaxLimit, true
	kept := []T{}
	for {
		vs, _, err := list(t, collection, q, setID)
		if err != nil {
			return nil, 0, err
		}
		for i := range vs {
			ok, err := keep(&vs[i])
			if err != nil {
				return nil, 0, err
			}
			if ok {
				kept = append(kept, vs[i])
			}
		}
		if len(vs) < q.Limit {
			break
		}
		q.Skip += len(vs)
	}
	total := len(kept)
	kept = kept[min(skip, total):]
	return kept[:min(limit, len(kept))], total, nil
}
