package brcode

import (
	"testing"

	"github.com/matryer/is"
)

// FuzzParse checks that Parse never panics and that every code it accepts
// re-encodes to a code that parses to an equal Code (and re-encodes identically).
func FuzzParse(f *testing.F) {
	for _, file := range []string{"positive.txt", "negative.txt"} {
		for _, v := range loadVectors(f, file) {
			f.Add(v.Code)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			if c != nil {
				t.Fatalf("Parse returned a Code with error %v", err)
			}
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			return
		}
		is := is.New(t)
		out, err := c.Encode()
		is.NoErr(err) // whatever Parse accepts re-encodes
		c2, err := Parse(out)
		is.NoErr(err)   // the re-encoding is valid
		is.Equal(c2, c) // and carries the same fields
		out2, err := c2.Encode()
		is.NoErr(err)       // still encodable
		is.Equal(out2, out) // encoding is stable
	})
}
