package bolt

import (
	"bytes"
	"testing"

	"github.com/matryer/is"
)

// TestAppendComponent: each 0x00 escaped as 0x00 0xFF wherever it stands, every other
// byte as it is, then the separator 0x00 0x01; and encoded tuples sort as their strings do
// component by component.
func TestAppendComponent(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct{ in, want string }{
		{"", "\x00\x01"},
		{"charges", "charges\x00\x01"},
		{"\x00", "\x00\xff\x00\x01"},
		{"a\x00b", "a\x00\xffb\x00\x01"},
		{"\x00\x00a\x00", "\x00\xff\x00\xffa\x00\xff\x00\x01"},
		{"é\xff", "é\xff\x00\x01"},
	} {
		is.Equal(string(appendComponent([]byte("p"), c.in)), "p"+c.want) // c.in
	}
	ordered := [][]string{{"a"}, {"a", ""}, {"a", "b"}, {"a\x00"}, {"a\x00", "a"}, {"a\x01"}, {"ab"}}
	for i := 1; i < len(ordered); i++ {
		is.True(bytes.Compare(tuple(ordered[i-1]...), tuple(ordered[i]...)) < 0) // tuples out of order
	}
}
