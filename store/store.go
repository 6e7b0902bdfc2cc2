// Package store is the persistence contract under payments.Service.
//
// A Store keeps records: opaque bytes addressed by (collection, company, id), with
// unique secondary keys (a charge's correlationID, a Pix's endToEndId) and ordered
// listing indexes. It persists and never decides: every business rule lives in the
// payments package, once.
//
// The contract is written so that a SQL database shared by several server processes
// can implement it as well as the embedded drivers (store/memory, store/bolt):
//
//   - Update runs a function in one read-write transaction. An error, or a panic,
//     anywhere in it rolls back everything it wrote. A driver may run the function more
//     than once (a serializable database retries on conflict), so it must have no effect
//     outside the transaction and be a pure function of what it reads in it: nothing a
//     run sets outside (a flag, a slice appended to, a value decoded into) may survive
//     into the next run. storetest.Rerun holds callers to this.
//   - Reads inside Update are reads-for-update: a record read and then written by one
//     Update is never overwritten by a concurrent Update in between (no lost update).
//     Misses and List ranges are protected as well as records (no phantoms): a Get or
//     GetByKey that found nothing, or a List that counted a range, stays true until the
//     Update commits, so "insert if missing" and "insert if fewer than n" are safe.
//   - Uniqueness is enforced by the store: Insert or Put of a record whose id or unique
//     key is already taken in its (collection, company) fails with ErrConflict.
//   - A failed Insert or Put (ErrConflict, ErrNotFound, ErrInvalid) writes nothing of its
//     record and leaves the transaction usable: the function may go on and commit.
//   - View runs a function on one consistent snapshot: every read in it sees the same
//     committed Updates, whole, however long it runs.
//   - Values from Next become visible in commit order: the writes of an Update that took
//     value n of a counter become visible only once every Update that took a smaller
//     value has committed or rolled back. A reader that follows a cursor over records
//     keyed by Next values (the event outbox) never skips one.
//   - Listing walks an index in order and costs in proportion to skip+limit, never to the
//     size of the collection; the total count of an unbounded index is kept by the store.
//
// store/storetest has a conformance case for each of these.
//
// Every method takes the company explicitly: there is no call that reaches records of
// another company.
package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ErrNotFound is returned when no record has the requested id or key.
var ErrNotFound = errors.New("store: not found")

// ErrConflict is returned (wrapped in a *ConflictError) when an id or unique key is taken.
var ErrConflict = errors.New("store: conflict")

// ErrInvalid is returned for arguments a store cannot represent (empty ids, bad queries).
var ErrInvalid = errors.New("store: invalid argument")

// ConflictError names the id or unique key that is already taken.
type ConflictError struct {
	Collection string
	Key        string // "id:<id>" or the unique key as given
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("store: conflict in %s on %q", e.Collection, e.Key)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Store is a transactional record store. Implementations are safe for concurrent use.
type Store interface {
	// Update runs fn in a read-write transaction and commits it if fn returns nil.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction. Writes in it fail.
	View(ctx context.Context, fn func(Tx) error) error
	// Close releases the store. Transactions after Close fail.
	Close() error
}

// Tx is one transaction. It must not be used after its function returns.
type Tx interface {
	// Get returns the record with id, or ErrNotFound.
	Get(collection, company, id string) (Record, error)
	// GetByKey returns the record holding the unique key, or ErrNotFound.
	GetByKey(collection, company, key string) (Record, error)
	// Insert stores a new record; ErrConflict if its id or one of its keys is taken.
	Insert(collection, company string, r Record) error
	// Put replaces the record with r.ID, with its keys and indexes; ErrNotFound if there is
	// none; ErrConflict if a new unique key belongs to another record.
	Put(collection, company string, r Record) error
	// Delete removes the record with id and its keys and index entries; ErrNotFound if none.
	Delete(collection, company, id string) error
	// List returns one page of an index in order, and the number of entries the query
	// matches without skip and limit.
	List(collection, company string, q Query) (Page, error)
	// Next returns the next value of a per-company counter, starting at 1. Its increments
	// roll back with the transaction, so values may be reused after a failed transaction.
	// Values become visible in commit order (see the package doc).
	Next(collection, company, counter string) (uint64, error)
}

// DataComparer is a Tx that can tell whether a record still holds the data it was read
// with, without copying or decoding it. It is optional: the Service checks the records a
// charge was prepared from through it in the writer's transaction when the store has it
// (store/bolt does), and reads and decodes them otherwise.
type DataComparer interface {
	// Unchanged reports whether the record with id (or, when byKey, the record holding the
	// unique key id) is stored with exactly data, or, when found is false, whether there
	// is no such record.
	Unchanged(collection, company, id string, byKey, found bool, data []byte) bool
}

// KeyResolver is a Tx that can say which record holds a unique key without reading the
// record. It is optional: the Service uses it where it needs a record's id only (the
// webhook audit of a transaction found by its endToEndId), and GetByKey otherwise.
type KeyResolver interface {
	// IDByKey returns the id of the record holding the unique key, or ErrNotFound.
	IDByKey(collection, company, key string) (string, error)
}

// Record is one stored document.
type Record struct {
	ID   string
	Data []byte
	// Keys are unique within (collection, company), e.g. "correlationID:abc".
	Keys []string
	// Indexes are the listing orders the record appears in.
	Indexes []Index
}

// Index places a record in a named ordered list. Entries of one index are ordered by Sort
// (bytewise), then by record id. Sort values are made by the caller, e.g. a fixed-width UTC
// timestamp, so that bytewise order is time order.
type Index struct {
	Name string
	Sort string
}

// Query selects a page of one index.
type Query struct {
	Index string // index name; every record the caller lists must carry it
	// From and To bound Sort: From <= sort < To. Empty means unbounded.
	From, To string
	Desc     bool // newest (largest Sort) first
	Skip     int
	Limit    int // 0 means no records, only the total
	// NoTotal says the caller does not read Page.Total: the driver leaves it 0 and skips
	// counting, which in a From/To range costs a walk of the whole range (queue passes,
	// which read a page at a time up to a bound, and look-ups of the first entry).
	NoTotal bool
}

// Page is the result of a List.
type Page struct {
	Records []Record
	Total   int // entries matching From/To, ignoring Skip and Limit
}

// MaxKeyBytes bounds what a record is stored and found by, in bytes: its collection and
// company together with its id, with each of its unique keys, and with each index entry's
// name, sort and the id. Check refuses a record past it. Every driver holds that much:
// PostgreSQL's B-tree indexes hold rows of 2,704 bytes (the columns' headers included),
// bbolt keys 32 KiB; past them a driver failed the whole transaction on its next
// statement (PostgreSQL) or after writing part of the record (bolt). The Service's
// longest is a webhook's index entry by its URL (up to 2,048 bytes).
const MaxKeyBytes = 2600

// Check validates the parts of a record every driver needs, for a write in collection and
// company. Drivers call it before they write anything. A key or an index entry (name and
// sort) listed twice is invalid: drivers would otherwise disagree on it (PostgreSQL failed
// the whole transaction on the second key, and counted a repeated entry twice in
// Page.Total where the memory store counted it once). So is a record past MaxKeyBytes.
func (r Record) Check(collection, company string) error {
	if r.ID == "" {
		return fmt.Errorf("%w: empty record id", ErrInvalid)
	}
	base := len(collection) + len(company)
	if base+len(r.ID) > MaxKeyBytes {
		return fmt.Errorf("%w: record id of %d bytes: collection, company and id must fit in %d", ErrInvalid, len(r.ID), MaxKeyBytes)
	}
	for i, k := range r.Keys {
		if k == "" {
			return fmt.Errorf("%w: empty unique key", ErrInvalid)
		}
		if slices.Contains(r.Keys[:i], k) {
			return fmt.Errorf("%w: unique key %q listed twice", ErrInvalid, k)
		}
		if base+len(k) > MaxKeyBytes {
			return fmt.Errorf("%w: unique key of %d bytes: collection, company and key must fit in %d", ErrInvalid, len(k), MaxKeyBytes)
		}
	}
	for i, ix := range r.Indexes {
		if ix.Name == "" {
			return fmt.Errorf("%w: empty index name", ErrInvalid)
		}
		if slices.Contains(r.Indexes[:i], ix) {
			return fmt.Errorf("%w: index entry %q %q listed twice", ErrInvalid, ix.Name, ix.Sort)
		}
		if base+len(ix.Name)+len(ix.Sort)+len(r.ID) > MaxKeyBytes {
			return fmt.Errorf("%w: index entry of %d bytes: collection, company, index name, sort and id must fit in %d", ErrInvalid, len(ix.Name)+len(ix.Sort), MaxKeyBytes)
		}
	}
	return nil
}

// Check validates a query. Drivers call it.
func (q Query) Check() error {
	if q.Index == "" {
		return fmt.Errorf("%w: empty index name", ErrInvalid)
	}
	if q.Skip < 0 || q.Limit < 0 {
		return fmt.Errorf("%w: negative skip or limit", ErrInvalid)
	}
	return nil
}

// Changes is what a Put of r over the stored old (the same id) changes besides the data:
// the keys and index entries old has and r has not (drop), and those r has and old has not
// (add). Drivers write only these, so a Put that keeps most of a record's entries, as a
// change of status does, does not delete and write them again.
func Changes(old, r Record) (drop, add Record) {
	drop = Record{ID: old.ID, Keys: without(old.Keys, r.Keys), Indexes: without(old.Indexes, r.Indexes)}
	add = Record{ID: r.ID, Keys: without(r.Keys, old.Keys), Indexes: without(r.Indexes, old.Indexes)}
	return drop, add
}

// without is a's elements that are not in b, in a's order.
func without[T comparable](a, b []T) []T {
	var out []T
	for _, v := range a {
		if !slices.Contains(b, v) {
			out = append(out, v)
		}
	}
	return out
}
