package store

import (
	"encoding/binary"
	"errors"
	"unsafe"
)

// The record meta encoding the drivers share (store/bolt in front of the data,
// store/postgres in a column of its own): the number of keys and each key, then the
// number of indexes and each index's name and sort, every count and length a uvarint.

// ErrCorruptMeta is returned by DecodeMeta for bytes AppendMeta did not write.
var ErrCorruptMeta = errors.New("store: corrupt record meta")

// AppendMeta appends r's keys and indexes to b.
func AppendMeta(b []byte, r Record) []byte {
	b = binary.AppendUvarint(b, uint64(len(r.Keys)))
	for _, k := range r.Keys {
		b = appendString(b, k)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Indexes)))
	for _, ix := range r.Indexes {
		b = appendString(b, ix.Name)
		b = appendString(b, ix.Sort)
	}
	return b
}

// MetaSize is about how many bytes AppendMeta writes for r, to size a buffer.
func MetaSize(r Record) int {
	n := 16
	for _, k := range r.Keys {
		n += len(k) + 4
	}
	for _, ix := range r.Indexes {
		n += len(ix.Name) + len(ix.Sort) + 8
	}
	return n
}

// DecodeMeta reads what AppendMeta wrote at the start of b into a Record with id, and
// returns the bytes after it. The Record's Data is left empty.
func DecodeMeta(id string, b []byte) (Record, []byte, error) {
	return decodeMeta(id, metaDecoder{b: b})
}

// SkipMeta returns the bytes of b after what AppendMeta wrote at its start, without
// decoding the keys and indexes.
func SkipMeta(b []byte) ([]byte, error) {
	d := metaDecoder{b: b}
	for _, per := range [2]uint64{1, 2} { // the keys, a string each; the indexes, two each
		n := d.uvarint()
		if n > uint64(len(d.b)) {
			return nil, ErrCorruptMeta
		}
		for i := uint64(0); i < n*per && d.err == nil; i++ {
			d.skip()
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	return d.b, nil
}

// DecodeMetaOwned is DecodeMeta for bytes the caller owns and never changes afterwards:
// the keys and sorts it returns share b's memory instead of each being copied, so that a
// read costs one copy of the record, not one per key.
func DecodeMetaOwned(id string, b []byte) (Record, []byte, error) {
	return decodeMeta(id, metaDecoder{b: b, alias: true})
}

func decodeMeta(id string, d metaDecoder) (Record, []byte, error) {
	r := Record{ID: id}
	nk := d.uvarint()
	if nk > 0 && nk <= uint64(len(d.b)) {
		r.Keys = make([]string, 0, nk)
	}
	for i := uint64(0); i < nk && d.err == nil; i++ {
		r.Keys = append(r.Keys, d.string())
	}
	ni := d.uvarint()
	if ni > 0 && ni <= uint64(len(d.b)) {
		r.Indexes = make([]Index, 0, ni)
	}
	for i := uint64(0); i < ni && d.err == nil; i++ {
		r.Indexes = append(r.Indexes, Index{Name: d.string(), Sort: d.string()})
	}
	if d.err != nil {
		return Record{}, nil, ErrCorruptMeta
	}
	return r, d.b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

type metaDecoder struct {
	b     []byte
	err   error
	alias bool // strings share b (DecodeMetaOwned)
}

func (d *metaDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = ErrCorruptMeta
		return 0
	}
	d.b = d.b[n:]
	return v
}

// skip passes over a string.
func (d *metaDecoder) skip() {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = ErrCorruptMeta
		return
	}
	d.b = d.b[n:]
}

func (d *metaDecoder) string() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = ErrCorruptMeta
		return ""
	}
	var s string
	switch {
	case n == 0:
	case d.alias:
		s = unsafe.String(&d.b[0], n)
	default:
		s = string(d.b[:n])
	}
	d.b = d.b[n:]
	return s
}
