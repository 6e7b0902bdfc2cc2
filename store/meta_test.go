package store_test

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
)

// SkipMeta finds the data after the meta where DecodeMeta does, and says when the bytes
// are not meta AppendMeta wrote.
func TestSkipMeta(t *testing.T) {
	is := is.New(t)
	for _, r := range []store.Record{
		{},
		{Keys: []string{"correlationID:a", ""}},
		{Indexes: []store.Index{{Name: "all", Sort: "2026"}, {Name: "", Sort: ""}}},
		{Keys: []string{"k"}, Indexes: []store.Index{{Name: "status:ACTIVE", Sort: "2026-11-28"}}},
	} {
		b := append(store.AppendMeta(nil, r), `{"n":1}`...)
		data, err := store.SkipMeta(b)
		is.NoErr(err)
		is.Equal(string(data), `{"n":1}`)
		_, rest, err := store.DecodeMeta("x", b)
		is.NoErr(err)
		is.Equal(data, rest)
	}
	for _, bad := range [][]byte{
		nil,
		{0x80},         // an unfinished count
		{1, 5, 'a'},    // a key longer than what is left
		{0, 1, 1, 'a'}, // an index with a name and no sort
		{9, 1, 'a'},    // more keys than bytes
	} {
		_, err := store.SkipMeta(bad)
		is.True(errors.Is(err, store.ErrCorruptMeta))
	}
}
