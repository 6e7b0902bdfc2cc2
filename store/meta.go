package store

import (
	"encoding/binary"
	"errors"
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
	r := Record{ID: id}
	d := metaDecoder{b: b}
	nk := d.uvarint()
	for i := uint64(0); i < nk && d.err == nil; i++ {
		r.Keys = append(r.Keys, d.string())
	}
	ni := d.uvarint()
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
	b   []byte
	err error
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

func (d *metaDecoder) string() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = ErrCorruptMeta
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
