package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/matryer/is"
)

// TestRun runs the example twice on one file, as a user would.
func TestRun(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "example.db")
	var out bytes.Buffer
	is.NoErr(run(context.Background(), &out, path))
	want := "created customer-ana\ncreated customer-acme\n2 customers in " + path + "\n" +
		"- customer-acme  ACME Ltda  BR:CNPJ 12ABC34501DE35\n" +
		"- customer-ana  Ana Souza  BR:CPF 52998224725\n"
	is.Equal(out.String(), want) // first run creates and lists

	out.Reset()
	is.NoErr(run(context.Background(), &out, path))
	is.True(bytes.HasPrefix(out.Bytes(), []byte("exists  customer-ana\nexists  customer-acme\n2 customers"))) // second run finds them in the file
}
