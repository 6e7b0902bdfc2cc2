package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pixfoundry/payments/store"
)

// tx is one transaction. It opens lazily, on the first call: that call names the company
// whose gate an Update takes (see the package doc). A failed Insert or Put is found out by
// reading before writing, so the database transaction never sees the failure and stays
// usable; any error the database does report ends the transaction (dbErr), and Update
// reruns the function when it was a conflict.
type tx struct {
	s        *Store
	ctx      context.Context
	writable bool

	conn    *pgxpool.Conn
	pending []*pgx.QueuedQuery // statements sent with the next round trip
	open    bool
	ended   bool
	dbErr   error
	local   *sync.Mutex
	lockKey int64
	locked  bool
	// committing is set when COMMIT is about to be sent: from then on a lost connection
	// leaves the outcome unknown, and the transaction is not run again (see lostBeforeCommit).
	committing bool
	// begun is set once BEGIN's answer is read: the connection was alive then, and the
	// function may since have been handed what it read (View runs it again only before).
	begun bool
}

var errReadOnly = fmt.Errorf("%w: write in a read-only transaction", store.ErrInvalid)

const selectRecord = `SELECT meta, data FROM payments_records WHERE collection = $1 AND company = $2 AND id = $3`

func (t *tx) Get(collection, company, id string) (store.Record, error) {
	if err := t.begin(collection, company); err != nil {
		return store.Record{}, err
	}
	var meta, data []byte
	b := &pgx.Batch{}
	b.Queue(selectRecord, collection, []byte(company), []byte(id))
	err := t.queryRow(b, &meta, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Record{}, store.ErrNotFound
	}
	if err != nil {
		return store.Record{}, err
	}
	return decodeRecord(id, meta, data)
}

// queryRow runs the one query of b, after the pending statements, and scans its row.
func (t *tx) queryRow(b *pgx.Batch, dest ...any) error {
	res, err := t.exec(b)
	if err != nil {
		return err
	}
	defer res.Close()
	err = res.QueryRow().Scan(dest...)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return t.fail(err)
	}
	if cerr := res.Close(); cerr != nil {
		return t.fail(cerr)
	}
	return err
}

func (t *tx) GetByKey(collection, company, key string) (store.Record, error) {
	if err := t.begin(collection, company); err != nil {
		return store.Record{}, err
	}
	var id, meta, data []byte
	b := &pgx.Batch{}
	b.Queue(`SELECT r.id, r.meta, r.data FROM payments_keys k
		JOIN payments_records r ON r.collection = k.collection AND r.company = k.company AND r.id = k.id
		WHERE k.collection = $1 AND k.company = $2 AND k.key = $3`, collection, []byte(company), []byte(key))
	err := t.queryRow(b, &id, &meta, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Record{}, store.ErrNotFound
	}
	if err != nil {
		return store.Record{}, err
	}
	return decodeRecord(string(id), meta, data)
}

// current reads the record with id (ok false if there is none) and the first of keys
// that a record other than id holds, in one round trip.
func (t *tx) current(collection, company, id string, keys []string) (old store.Record, ok bool, taken string, err error) {
	b := &pgx.Batch{}
	b.Queue(selectRecord, collection, []byte(company), []byte(id))
	for _, k := range keys {
		b.Queue(`SELECT id FROM payments_keys WHERE collection = $1 AND company = $2 AND key = $3`, collection, []byte(company), []byte(k))
	}
	res, err := t.exec(b)
	if err != nil {
		return old, false, "", err
	}
	defer res.Close()
	var meta, data []byte
	switch err := res.QueryRow().Scan(&meta, &data); {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return old, false, "", t.fail(err)
	default:
		if old, err = decodeRecord(id, meta, data); err != nil {
			return old, false, "", err
		}
		ok = true
	}
	for _, k := range keys {
		var owner []byte
		switch err := res.QueryRow().Scan(&owner); {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return old, false, "", t.fail(err)
		default:
			if string(owner) != id && taken == "" {
				taken = k
			}
		}
	}
	if err := res.Close(); err != nil {
		return old, false, "", t.fail(err)
	}
	return old, ok, taken, nil
}

// write starts a write of r: it checks the transaction and the record, and reads what
// stands at r's id and keys now (see current).
func (t *tx) write(collection, company string, r store.Record) (old store.Record, exists bool, taken string, err error) {
	if !t.writable {
		return old, false, "", errReadOnly
	}
	if err := r.Check(collection, company); err != nil {
		return old, false, "", err
	}
	if err := t.begin(collection, company); err != nil {
		return old, false, "", err
	}
	return t.current(collection, company, r.ID, r.Keys)
}

func (t *tx) Insert(collection, company string, r store.Record) error {
	_, exists, taken, err := t.write(collection, company, r)
	switch {
	case err != nil:
		return err
	case exists:
		return &store.ConflictError{Collection: collection, Key: "id:" + r.ID}
	case taken != "":
		return &store.ConflictError{Collection: collection, Key: taken}
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO payments_records (collection, company, id, meta, data) VALUES ($1, $2, $3, $4, $5)`,
		collection, []byte(company), []byte(r.ID), encodeMeta(r), dataOf(r))
	t.queueAdd(b, collection, company, r)
	t.queueCounts(b, collection, company, r.ID, countDeltas(nil, r.Indexes))
	return t.send(b)
}

func (t *tx) Put(collection, company string, r store.Record) error {
	old, exists, taken, err := t.write(collection, company, r)
	switch {
	case err != nil:
		return err
	case !exists:
		return store.ErrNotFound
	case taken != "":
		return &store.ConflictError{Collection: collection, Key: taken}
	}
	b := &pgx.Batch{}
	b.Queue(`UPDATE payments_records SET meta = $4, data = $5 WHERE collection = $1 AND company = $2 AND id = $3`,
		collection, []byte(company), []byte(r.ID), encodeMeta(r), dataOf(r))
	drop, add := store.Changes(old, r) // only what changed
	t.queueRemove(b, collection, company, drop)
	t.queueAdd(b, collection, company, add)
	t.queueCounts(b, collection, company, r.ID, countDeltas(drop.Indexes, add.Indexes))
	return t.send(b)
}

func (t *tx) Delete(collection, company, id string) error {
	if !t.writable {
		return errReadOnly
	}
	if err := t.begin(collection, company); err != nil {
		return err
	}
	old, exists, _, err := t.current(collection, company, id, nil)
	switch {
	case err != nil:
		return err
	case !exists:
		return store.ErrNotFound
	}
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM payments_records WHERE collection = $1 AND company = $2 AND id = $3`, collection, []byte(company), []byte(id))
	t.queueRemove(b, collection, company, old)
	t.queueCounts(b, collection, company, id, countDeltas(old.Indexes, nil))
	return t.send(b)
}

// dataOf is the record's data, never NULL.
func dataOf(r store.Record) []byte {
	if r.Data == nil {
		return []byte{}
	}
	return r.Data
}

func (t *tx) queueAdd(b *pgx.Batch, collection, company string, r store.Record) {
	for _, k := range r.Keys {
		b.Queue(`INSERT INTO payments_keys (collection, company, key, id) VALUES ($1, $2, $3, $4)`,
			collection, []byte(company), []byte(k), []byte(r.ID))
	}
	for _, ix := range r.Indexes {
		b.Queue(`INSERT INTO payments_index (collection, company, name, sort, id) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
			collection, []byte(company), []byte(ix.Name), []byte(ix.Sort), []byte(r.ID))
	}
}

func (t *tx) queueRemove(b *pgx.Batch, collection, company string, old store.Record) {
	for _, k := range old.Keys {
		b.Queue(`DELETE FROM payments_keys WHERE collection = $1 AND company = $2 AND key = $3 AND id = $4`,
			collection, []byte(company), []byte(k), []byte(old.ID))
	}
	for _, ix := range old.Indexes {
		b.Queue(`DELETE FROM payments_index WHERE collection = $1 AND company = $2 AND name = $3 AND sort = $4 AND id = $5`,
			collection, []byte(company), []byte(ix.Name), []byte(ix.Sort), []byte(old.ID))
	}
}

// countDeltas is the change in entries per index name when a record's indexes go from old
// to new; names whose count does not change are left out.
func countDeltas(old, new []store.Index) map[string]int64 {
	d := map[string]int64{}
	for _, ix := range old {
		d[ix.Name]--
	}
	for _, ix := range new {
		d[ix.Name]++
	}
	for k, v := range d {
		if v == 0 {
			delete(d, k)
		}
	}
	return d
}

func (t *tx) queueCounts(b *pgx.Batch, collection, company, id string, deltas map[string]int64) {
	sh := shard(id)
	for name, d := range deltas {
		b.Queue(`INSERT INTO payments_counts (collection, company, name, shard, n) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (collection, company, name, shard) DO UPDATE SET n = payments_counts.n + excluded.n`,
			collection, []byte(company), []byte(name), sh, d)
	}
}

// send keeps the queued writes to go with the next round trip (the next statement, or
// the commit): a write that the database refuses then fails the transaction, which is
// retried, as it would have been had the write been sent at once.
func (t *tx) send(b *pgx.Batch) error {
	t.pending = append(t.pending, b.QueuedQueries...)
	return nil
}

func (t *tx) List(collection, company string, q store.Query) (store.Page, error) {
	if err := q.Check(); err != nil {
		return store.Page{}, err
	}
	if err := t.begin(collection, company); err != nil {
		return store.Page{}, err
	}
	where := `i.collection = $1 AND i.company = $2 AND i.name = $3`
	args := []any{collection, []byte(company), []byte(q.Index)}
	if q.From != "" {
		args = append(args, []byte(q.From))
		where += fmt.Sprintf(" AND i.sort >= $%d", len(args))
	}
	if q.To != "" {
		args = append(args, []byte(q.To))
		where += fmt.Sprintf(" AND i.sort < $%d", len(args))
	}
	b := &pgx.Batch{}
	if q.Limit > 0 {
		order := "i.sort, i.id"
		if q.Desc {
			order = "i.sort DESC, i.id DESC"
		}
		b.Queue(fmt.Sprintf(`SELECT r.id, r.meta, r.data FROM payments_index i
			JOIN payments_records r ON r.collection = i.collection AND r.company = i.company AND r.id = i.id
			WHERE %s ORDER BY %s LIMIT %d OFFSET %d`, where, order, q.Limit, q.Skip), args...)
	}
	switch {
	case q.NoTotal:
		b.Queue(`SELECT 0`)
	case q.From == "" && q.To == "":
		b.Queue(`SELECT coalesce(sum(n), 0) FROM payments_counts WHERE collection = $1 AND company = $2 AND name = $3`, args...)
	default:
		b.Queue(`SELECT count(*) FROM payments_index i WHERE `+where, args...)
	}
	res, err := t.exec(b)
	if err != nil {
		return store.Page{}, err
	}
	defer res.Close()
	var page store.Page
	if q.Limit > 0 {
		rows, err := res.Query()
		if err != nil {
			return store.Page{}, t.fail(err)
		}
		for rows.Next() {
			var id, meta, data []byte
			if err := rows.Scan(&id, &meta, &data); err != nil {
				rows.Close()
				return store.Page{}, t.fail(err)
			}
			r, err := decodeRecord(string(id), meta, data)
			if err != nil {
				rows.Close()
				return store.Page{}, err
			}
			page.Records = append(page.Records, r)
		}
		if err := rows.Err(); err != nil {
			return store.Page{}, t.fail(err)
		}
	}
	var total int64
	if err := res.QueryRow().Scan(&total); err != nil {
		return store.Page{}, t.fail(err)
	}
	if err := res.Close(); err != nil {
		return store.Page{}, t.fail(err)
	}
	page.Total = int(total)
	return page, nil
}

// Next takes the counter's row lock until commit: the next taker waits for this
// transaction to end, which makes values visible in commit order.
func (t *tx) Next(collection, company, counter string) (uint64, error) {
	if !t.writable {
		return 0, errReadOnly
	}
	if err := t.begin(collection, company); err != nil {
		return 0, err
	}
	var n int64
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO payments_counters (collection, company, name, value) VALUES ($1, $2, $3, 1)
		ON CONFLICT (collection, company, name) DO UPDATE SET value = payments_counters.value + 1 RETURNING value`,
		collection, []byte(company), []byte(counter))
	if err := t.queryRow(b, &n); err != nil {
		return 0, t.fail(err)
	}
	return uint64(n), nil
}

// Meta encoding: store.AppendMeta, as store/bolt writes in front of the data.

func encodeMeta(r store.Record) []byte {
	return store.AppendMeta(make([]byte, 0, store.MetaSize(r)), r)
}

func decodeRecord(id string, meta, data []byte) (store.Record, error) {
	r, rest, err := store.DecodeMeta(id, meta)
	if err == nil && len(rest) > 0 {
		err = store.ErrCorruptMeta
	}
	if err != nil {
		return store.Record{}, fmt.Errorf("postgres store: record %q: %w", id, err)
	}
	r.Data = data
	return r, nil
}
