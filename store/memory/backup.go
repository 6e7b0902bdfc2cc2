package memory

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pixfoundry/payments/store"
)

var _ store.Backuper = (*Store)(nil)

// Snapshot format (Backup writes it, Restore reads it): a stream of encoding/gob values,
//
//	snapshotHeader{Format: "payments-memory-snapshot", Version: 1, Records: n, Counters: m}
//	n × snapshotRecord{Collection, Company, Record}  (the record with its keys and indexes)
//	m × snapshotCounter{Name, Value}
//
// Unique keys and index entries are not written: Restore rebuilds them from the records.
const (
	snapshotFormat  = "payments-memory-snapshot"
	snapshotVersion = 1
)

type snapshotHeader struct {
	Format            string
	Version           int
	Records, Counters int
}

type snapshotRecord struct {
	Collection, Company string
	Record              store.Record
}

type snapshotCounter struct {
	Name  string
	Value uint64
}

// Backup writes a snapshot of the store to w (store.Backuper); Restore opens it as a new
// Store. The state is copied under the read lock, as one View would see it (record bytes
// are shared, never copied: the store never changes them in place), and then encoded with
// no lock held, so a slow w holds up no writer.
func (s *Store) Backup(ctx context.Context, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return errClosed
	}
	var recs []snapshotRecord
	for sp, byID := range s.records {
		collection, company, _ := strings.Cut(sp, "\x00")
		for _, r := range byID {
			recs = append(recs, snapshotRecord{Collection: collection, Company: company, Record: r})
		}
	}
	counters := make([]snapshotCounter, 0, len(s.counters))
	for name, v := range s.counters {
		counters = append(counters, snapshotCounter{Name: name, Value: v})
	}
	s.mu.RUnlock()

	bw := bufio.NewWriter(store.ContextWriter(ctx, w))
	enc := gob.NewEncoder(bw)
	if err := enc.Encode(snapshotHeader{Format: snapshotFormat, Version: snapshotVersion, Records: len(recs), Counters: len(counters)}); err != nil {
		return fmt.Errorf("memory store: backup: %w", err)
	}
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("memory store: backup: %w", err)
		}
	}
	for _, c := range counters {
		if err := enc.Encode(c); err != nil {
			return fmt.Errorf("memory store: backup: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("memory store: backup: %w", err)
	}
	return nil
}

var errSnapshot = errors.New("memory store: not a memory store snapshot")

// Restore returns a new Store holding the snapshot that Backup wrote to r. A stream that
// is not such a snapshot, or is cut short, is an error and no Store.
func Restore(r io.Reader) (*Store, error) {
	dec := gob.NewDecoder(bufio.NewReader(r))
	var h snapshotHeader
	if err := dec.Decode(&h); err != nil || h.Format != snapshotFormat {
		return nil, errSnapshot
	}
	if h.Version != snapshotVersion {
		return nil, fmt.Errorf("memory store: snapshot version %d, this version reads %d", h.Version, snapshotVersion)
	}
	s := New()
	t := &tx{s: s, writable: true}
	for i := range h.Records {
		var sr snapshotRecord
		if err := dec.Decode(&sr); err != nil {
			return nil, fmt.Errorf("memory store: restore: record %d of %d: %w", i+1, h.Records, err)
		}
		if err := t.Insert(sr.Collection, sr.Company, sr.Record); err != nil {
			return nil, fmt.Errorf("memory store: restore: record %d of %d: %w", i+1, h.Records, err)
		}
		t.undo = nil // nothing to roll back to: the store is new
	}
	for i := range h.Counters {
		var c snapshotCounter
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("memory store: restore: counter %d of %d: %w", i+1, h.Counters, err)
		}
		s.counters[c.Name] = c.Value
	}
	return s, nil
}
