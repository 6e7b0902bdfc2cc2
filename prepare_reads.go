package payments

import (
	"errors"
	"sync"

	"github.com/pixfoundry/payments/store"
)

// Reads for preparing charges without a read transaction. Preparing a charge (prepare.go)
// reads a few records of its company: the company, its default account and that account's
// books. A read transaction on bolt costs about as much as those reads, and the records
// change seldom (an account's books change with every payment, not with every charge). So
// after each prepared charge the Service keeps, per company, the records that preparation
// read (a readSet), and prepares that company's next charge from them alone, with no
// transaction. The records may since have changed: that costs nothing in correctness,
// since the transaction checks the prepared work against what it reads itself, as it
// checks work prepared from a read transaction that ended before the write began, and does
// the work again when they differ; it then forgets the company's set (readSets.forget), so
// that the charge after it is prepared from a fresh read transaction.

// readSet is what Get and GetByKey answered in one preparation: records, or not found.
type readSet map[readKey]readResult

type readKey struct {
	byKey               bool // GetByKey, id is the key
	collection, company string
	id                  string
}

type readResult struct {
	r     store.Record
	found bool
}

// readSets keeps the last readSet of each company that prepared a charge; at most
// memoMax, starting over when full. Safe for concurrent use.
type readSets struct {
	mu sync.Mutex
	m  map[string]readSet
}

func (s *readSets) get(company string) readSet {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[company]
}

func (s *readSets) put(company string, rs readSet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= memoMax {
		s.m = make(map[string]readSet)
	}
	s.m[company] = rs
}

func (s *readSets) forget(company string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, company)
}

// errNotRead is what a replayTx answers for a read its set does not hold, or a call that
// is not a read: preparation then gives up (prepareCharge returns nil or less) and the
// Service prepares from a read transaction.
var errNotRead = errors.New("payments: not in the read set")

// recordTx is a read transaction that records what Get and GetByKey answer. A call it
// cannot record (another read, or an error other than not found) spoils the set.
type recordTx struct {
	store.Tx
	set     readSet
	spoiled bool
}

func (t *recordTx) Get(collection, company, id string) (store.Record, error) {
	r, err := t.Tx.Get(collection, company, id)
	t.record(readKey{false, collection, company, id}, r, err)
	return r, err
}

func (t *recordTx) GetByKey(collection, company, key string) (store.Record, error) {
	r, err := t.Tx.GetByKey(collection, company, key)
	t.record(readKey{true, collection, company, key}, r, err)
	return r, err
}

func (t *recordTx) record(k readKey, r store.Record, err error) {
	switch {
	case err == nil:
		t.set[k] = readResult{r: r, found: true}
	case errors.Is(err, store.ErrNotFound):
		t.set[k] = readResult{}
	default:
		t.spoiled = true
	}
}

func (t *recordTx) List(collection, company string, q store.Query) (store.Page, error) {
	t.spoiled = true
	return t.Tx.List(collection, company, q)
}

func (t *recordTx) Next(collection, company, counter string) (uint64, error) {
	t.spoiled = true
	return t.Tx.Next(collection, company, counter)
}

// replayTx answers Get and GetByKey from a readSet, and nothing else. The records it
// hands out are shared by every replay of the set: prepareCharge only reads them.
type replayTx struct {
	set    readSet
	missed bool // a call the set could not answer
}

func (t *replayTx) Get(collection, company, id string) (store.Record, error) {
	return t.read(readKey{false, collection, company, id})
}

func (t *replayTx) GetByKey(collection, company, key string) (store.Record, error) {
	return t.read(readKey{true, collection, company, key})
}

func (t *replayTx) read(k readKey) (store.Record, error) {
	res, ok := t.set[k]
	switch {
	case !ok:
		t.missed = true
		return store.Record{}, errNotRead
	case !res.found:
		return store.Record{}, store.ErrNotFound
	}
	return res.r, nil
}

func (t *replayTx) Insert(string, string, store.Record) error { return t.miss() }
func (t *replayTx) Put(string, string, store.Record) error    { return t.miss() }
func (t *replayTx) Delete(string, string, string) error       { return t.miss() }

func (t *replayTx) List(string, string, store.Query) (store.Page, error) {
	return store.Page{}, t.miss()
}

func (t *replayTx) Next(string, string, string) (uint64, error) { return 0, t.miss() }

func (t *replayTx) miss() error {
	t.missed = true
	return errNotRead
}
