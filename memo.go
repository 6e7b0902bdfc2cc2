package payments

import (
	"bytes"
	"sync"

	"github.com/pixfoundry/payments/store"
)

// decodeMemo keeps, for a few records almost every write reads (a company, its default
// account, its books), the value last decoded with the bytes it was decoded from. A read
// that finds the same bytes in its transaction takes the value without decoding it again,
// so the result is what decoding would give: the memo saves time and decides nothing.
// Values are structs returned by copy; what they point to is shared, so a reader whose
// value has pointers copies them before the value leaves it (Company.detached). It holds
// at most memoMax entries and starts over when full. Safe for concurrent use.
type decodeMemo struct {
	mu sync.Mutex
	m  map[memoKey]memoEntry
}

// memoMax bounds the memo: three or four entries per active company.
const memoMax = 4096

type memoKey struct{ collection, company, id string }

type memoEntry struct {
	raw []byte
	val any
}

func (m *decodeMemo) get(k memoKey, raw []byte) (any, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[k]
	if !ok || !bytes.Equal(e.raw, raw) {
		return nil, false
	}
	return e.val, true
}

func (m *decodeMemo) put(k memoKey, raw []byte, val any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= memoMax {
		m.m = make(map[memoKey]memoEntry)
	}
	m.m[k] = memoEntry{raw: raw, val: val}
}

// decodeMemoized decodes r, a record of (collection, company), into a T, through the memo.
// T must be a struct whose pointers and slices nobody writes through.
func decodeMemoized[T any](m *decodeMemo, collection, company string, r store.Record) (T, error) {
	k := memoKey{collection, company, r.ID}
	if v, ok := m.get(k, r.Data); ok {
		return v.(T), nil
	}
	var v T
	if err := decode(r, &v); err != nil {
		return v, err
	}
	m.put(k, r.Data, v)
	return v, nil
}
