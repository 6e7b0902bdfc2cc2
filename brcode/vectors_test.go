package brcode

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// vector is a named test vector from testdata.
type vector struct {
	Name string
	Code string
}

// loadVectors reads "name TAB code" lines from testdata/<file>.
func loadVectors(tb testing.TB, file string) []vector {
	tb.Helper()
	f, err := os.Open("testdata/" + file)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var vs []vector
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, code, ok := strings.Cut(line, "\t")
		if !ok {
			tb.Fatalf("malformed vector line %q", line)
		}
		vs = append(vs, vector{Name: name, Code: code})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return vs
}

// withCRC appends "6304" and the CRC of body: a helper to build test codes.
func withCRC(body string) string {
	body += "6304"
	return string(appendCRC([]byte(body), crcString(body)))
}
