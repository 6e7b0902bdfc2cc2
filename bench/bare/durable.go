package main

import (
	"encoding/binary"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/bbolt"
)

// durable is the floor of a create-charge that keeps what it is sent, on this machine with
// bbolt: what the server's create cannot do with less, and nothing else.
//
// Each POST, before it is answered, is committed to the bbolt file with an fsync, in one
// transaction with the POSTs waiting at that moment (group commit, as store/bolt commits),
// writing four keys:
//   - the record, of the size the server stores a charge in (recordSize), under a
//     time-ordered id, so that records append as the server's do;
//   - its event, of the size of the server's CHARGE_CREATED (eventSize): what a webhook
//     will carry, kept until it is delivered;
//   - its correlationID, looked up first, so that a retry finds it and is refused;
//   - one index entry, so that a list finds it without a scan.
//
// It answers with as many bytes as the server's reply (replySize). It builds no BR Code,
// prices no fee, checks no App ID, keeps no other key or index and no count, and encodes
// by appending bytes: the server does each of those. With -keys it keeps every key and
// count the server keeps instead of four (durable_keys.go).
//
// Each GET is the floor of a read the same way (see get): the record found by its
// correlationID in one read transaction and answered, at the size of the server's reply.
type durable struct {
	db   *bbolt.DB
	all  bool // -keys: every key the server's create writes (durable_keys.go), not four
	mu   sync.Mutex
	wait []*pending // writes for the next commit
	wake chan struct{}
	seq  uint64 // the writer's
}

// The sizes, in bytes, the server stores and answers for the load script's create (a
// charge of 1990 with a comment), measured on the server: the charge's and the event's
// values as its bbolt file holds them (TestKeysFloorWritesWhatTheServerWrites checks them
// against the server's), and its replies.
const (
	recordSize   = 973
	eventSize    = 2020
	replySize    = 1753
	getReplySize = 1506 // GET of the load script's charge (no comment)
)

type pending struct {
	corr       string
	record, ev []byte
	done       chan error
}

var (
	errTaken    = errors.New("correlationID taken")
	errNotFound = errors.New("charge not found")
)

var bucketNames = [][]byte{[]byte("records"), []byte("keys"), []byte("index"), []byte("events")}

func openDurable(path string, all bool) (*durable, error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second, FreelistType: bbolt.FreelistMapType, NoFreelistSync: true})
	if err != nil {
		return nil, err
	}
	names := bucketNames
	if all {
		names = allBuckets
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, name := range names {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	d := &durable{db: db, all: all, wake: make(chan struct{}, 1)}
	go d.write()
	return d, nil
}

func (d *durable) create(w http.ResponseWriter, req chargeRequest) {
	p := &pending{corr: req.CorrelationID, done: make(chan error, 1)}
	p.record, p.ev = padded(req, recordSize), padded(req, eventSize)
	d.mu.Lock()
	d.wait = append(d.wait, p)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
	if err := <-p.done; err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, errTaken) {
			status = http.StatusBadRequest
		}
		reply(w, status, map[string]string{"error": err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(padded(req, replySize))
}

// get is the floor of the server's get-charge: in one bbolt read transaction, the
// correlationID's key gives the record's id and the id the record, as the server finds a
// charge by its correlationID; the record's bytes are answered as they are stored, padded
// to the size of the server's reply. It checks no App ID, decodes nothing and presents
// nothing (no links, no payment methods): the server does each of those.
func (d *durable) get(w http.ResponseWriter, corr string) {
	var out []byte
	err := d.db.View(func(tx *bbolt.Tx) error {
		key, id := []byte(corr), []byte(nil)
		if d.all {
			key = allCorrKey(corr)
		}
		if id = tx.Bucket(bucketNames[1]).Get(key); id == nil {
			return errNotFound
		}
		if d.all {
			id = tuple("charges", company, string(id))
		}
		record := tx.Bucket(bucketNames[0]).Get(id)
		out = make([]byte, len(record), max(len(record), getReplySize))
		copy(out, record) // bbolt's bytes live only as long as the transaction
		return nil
	})
	if err != nil {
		reply(w, http.StatusNotFound, map[string]string{"error": err.Error()})
		return
	}
	out = appendFill(out, ' ', getReplySize)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(out)
}

// padded is a JSON object of n bytes with req's fields.
func padded(req chargeRequest, n int) []byte {
	b := make([]byte, 0, n)
	b = append(b, `{"correlationID":`...)
	b = strconv.AppendQuote(b, req.CorrelationID)
	b = append(b, `,"value":`...)
	b = strconv.AppendInt(b, req.Value, 10)
	b = append(b, `,"pad":"`...)
	return append(appendFill(b, 'x', n-2), `"}`...)
}

// appendFill appends c to b until b is n bytes long, a run at a time: the floor pads every
// answer, and a byte-at-a-time append would be a cost the server does not have.
func appendFill(b []byte, c byte, n int) []byte {
	if len(b) >= n {
		return b
	}
	b = slices.Grow(b, n-len(b))
	fill := b[len(b):n]
	for i := range fill {
		fill[i] = c
	}
	return b[:n]
}

// write commits the waiting writes, all of them in one transaction, for as long as the
// process runs.
func (d *durable) write() {
	for range d.wake {
		d.mu.Lock()
		batch := d.wait
		d.wait = nil
		d.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		errs := make([]error, len(batch))
		err := d.db.Update(func(tx *bbolt.Tx) error {
			if d.all {
				return d.putAll(tx, batch, errs)
			}
			records, keys, index, events := tx.Bucket(bucketNames[0]), tx.Bucket(bucketNames[1]), tx.Bucket(bucketNames[2]), tx.Bucket(bucketNames[3])
			for _, b := range []*bbolt.Bucket{records, keys, index, events} {
				b.FillPercent = 0.9
			}
			for i, p := range batch {
				if keys.Get([]byte(p.corr)) != nil {
					errs[i] = errTaken
					continue
				}
				d.seq++
				id := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano())), d.seq)
				for _, put := range []struct {
					b    *bbolt.Bucket
					k, v []byte
				}{{records, id, p.record}, {keys, []byte(p.corr), id}, {index, append([]byte("status:ACTIVE\x00"), id...), nil}, {events, id, p.ev}} {
					if err := put.b.Put(put.k, put.v); err != nil {
						return err
					}
				}
			}
			return nil
		})
		for i, p := range batch {
			if err != nil {
				errs[i] = err
			}
			p.done <- errs[i]
		}
	}
}

// close stops the writer and closes the file: for tests, once every create has returned.
func (d *durable) close() error {
	close(d.wake)
	return d.db.Close()
}
