package memory

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"strings"

	"github.com/pixfoundry/payments/store"
)

var _ store.Backuper = (*Store)(nil)

// Snapshot format (Backup writes it, Restore reads it): a stream of encoding/gob values,
//
//	snapshotHeader{Format: "payments-memory-snapshot", Version: 2, Records: n, Counters: m}
//	n × snapshotRecord{Collection, Company, Record}  (the record with its keys and indexes)
//	m × snapshotCounter{Name, Value}
//	snapshotTrailer{Sum}                             (version 2)
//
// Unique keys and index entries are not written: Restore rebuilds them from the records.
// Sum is the CRC-32 (Castagnoli) of the records and counters as written (see sum): gob
// decodes many a damaged stream into other values without an error, and a store restored
// from them would hold records no version wrote. Version 1 snapshots, without it, are
// still read.
const (
	snapshotFormat  = "payments-memory-snapshot"
	snapshotVersion = 2
)

type snapshotTrailer struct {
	Sum uint32
}

// snapshotSum is the checksum of a snapshot's records and counters, fed in order.
type snapshotSum struct{ h hash.Hash32 }

func newSnapshotSum() snapshotSum { return snapshotSum{crc32.New(crc32.MakeTable(crc32.Castagnoli))} }

// field feeds b, length first, so that the fields' boundaries count.
func (s snapshotSum) field(b []byte) {
	s.h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
	s.h.Write(b)
}

func (s snapshotSum) record(r snapshotRecord) {
	s.field([]byte(r.Collection))
	s.field([]byte(r.Company))
	s.field([]byte(r.Record.ID))
	s.field(r.Record.Data)
	s.field(binary.BigEndian.AppendUint64(nil, uint64(len(r.Record.Keys))))
	for _, k := range r.Record.Keys {
		s.field([]byte(k))
	}
	s.field(binary.BigEndian.AppendUint64(nil, uint64(len(r.Record.Indexes))))
	for _, ix := range r.Record.Indexes {
		s.field([]byte(ix.Name))
		s.field([]byte(ix.Sort))
	}
}

func (s snapshotSum) counter(c snapshotCounter) {
	s.field([]byte(c.Name))
	s.field(binary.BigEndian.AppendUint64(nil, c.Value))
}

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
	sum := newSnapshotSum()
	for _, r := range recs {
		sum.record(r)
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("memory store: backup: %w", err)
		}
	}
	for _, c := range counters {
		sum.counter(c)
		if err := enc.Encode(c); err != nil {
			return fmt.Errorf("memory store: backup: %w", err)
		}
	}
	if err := enc.Encode(snapshotTrailer{Sum: sum.h.Sum32()}); err != nil {
		return fmt.Errorf("memory store: backup: %w", err)
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
	if h.Version != 1 && h.Version != snapshotVersion {
		return nil, fmt.Errorf("memory store: snapshot version %d, this version reads 1 and %d", h.Version, snapshotVersion)
	}
	if h.Records < 0 || h.Counters < 0 {
		return nil, errSnapshot
	}
	s := New()
	t := &tx{s: s, writable: true}
	sum := newSnapshotSum()
	for i := range h.Records {
		var sr snapshotRecord
		if err := dec.Decode(&sr); err != nil {
			return nil, fmt.Errorf("memory store: restore: record %d of %d: %w", i+1, h.Records, err)
		}
		sum.record(sr)
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
		sum.counter(c)
		s.counters[c.Name] = c.Value
	}
	if h.Version >= 2 {
		var tr snapshotTrailer
		if err := dec.Decode(&tr); err != nil {
			return nil, fmt.Errorf("memory store: restore: the checksum: %w", err)
		}
		if tr.Sum != sum.h.Sum32() {
			return nil, errors.New("memory store: restore: the snapshot is damaged (its checksum does not match what it holds)")
		}
	}
	return s, nil
}
