package bolt

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestOpen_InUse: a file another store holds open (bbolt's flock conflicts even within one
// process) is an error that says the file is in use, not a bare "timeout".
func TestOpen_InUse(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "payments.db")
	first, err := Open(path)
	is.NoErr(err)

	_, err = open(path, time.Millisecond, Options{})                             // a short wait: the lock will not be released
	is.True(err != nil)                                                          // refused
	is.True(strings.Contains(err.Error(), path+" is in use by another process")) // saying why
	is.True(!strings.HasSuffix(err.Error(), "timeout"))                          // not bbolt's bare word

	is.NoErr(first.Close())
	again, err := open(path, time.Millisecond, Options{})
	is.NoErr(err) // free again once the holder closes it
	is.NoErr(again.Close())
}
