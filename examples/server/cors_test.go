package main

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestCLI_CORSOrigins: -cors-origins is checked before anything is opened: each entry an
// origin scheme://host[:port], or the single *; a bad one is a usage error naming the
// flag and the entry.
func TestCLI_CORSOrigins(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value string
		want        string // in stderr
	}{
		{"Path", "https://shop.example/checkout", `"https://shop.example/checkout" must have no path`},
		{"TrailingSlash", "https://shop.example/", "no path"},
		{"NoScheme", "shop.example", "http:// or https://"},
		{"Null", "null", "http:// or https://"},
		{"EmptyEntry", "https://shop.example,,https://other.example", "is empty"},
		{"TrailingComma", "https://shop.example,", "is empty"},
		{"Spaces", " , ", "is empty"},
		{"StarWithOthers", "*,https://shop.example", `"*" allows every origin and goes alone`},
		{"StarTwice", "*,*", "goes alone"},
		{"BadPort", "http://127.0.0.1:70000", "port"},
		{"Query", "https://shop.example?x", "query"},
		{"NonASCII", "https://café.example", "punycode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			db := filepath.Join(t.TempDir(), "x.db")
			var stdout, stderr lockedBuffer
			code := cli(context.Background(), []string{"-addr", "127.0.0.1:0", "-db", db, "-cors-origins", tc.value}, &stdout, &stderr)
			is.Equal(code, exitUsage)                                             // a usage error
			is.True(strings.Contains(stderr.String(), "server: -cors-origins: ")) // naming the flag
			is.True(strings.Contains(stderr.String(), tc.want))                   // and what is wrong
			is.Equal(stdout.String(), "")
			_, err := os.Stat(db)
			is.True(errors.Is(err, fs.ErrNotExist)) // nothing was opened
		})
	}
}

// preflight sends, over real HTTP, the OPTIONS request a browser sends before a POST with
// the App ID and a JSON body from a page of origin.
func preflight(t *testing.T, url, origin string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("OPTIONS", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// TestRun_CORSOrigins: the origins of -cors-origins (spaces around the commas are fine)
// reach the handler: their preflights are answered, others' refused; without the flag a
// preflight gets 405 and no CORS header, and with * every origin is allowed.
func TestRun_CORSOrigins(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := start(t, "-db", "memory:", "-cors-origins", "https://shop.example , HTTP://localhost:5173")
	for _, origin := range []string{"https://shop.example", "http://localhost:5173"} {
		res := preflight(t, srv.base+"/api/openpix/v1/charge", origin)
		is.Equal(res.StatusCode, http.StatusNoContent)                  // answered
		is.Equal(res.Header.Get("Access-Control-Allow-Origin"), origin) // for that origin
		is.True(strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "Authorization"))
	}
	res := preflight(t, srv.base+"/api/openpix/v1/charge", "https://other.example")
	is.Equal(res.StatusCode, http.StatusForbidden) // not configured
	is.Equal(res.Header.Get("Access-Control-Allow-Origin"), "")
	is.NoErr(srv.stop())

	srv = start(t, "-db", "memory:")
	res = preflight(t, srv.base+"/api/openpix/v1/charge", "https://shop.example")
	is.Equal(res.StatusCode, http.StatusMethodNotAllowed) // no CORS by default
	is.Equal(res.Header.Get("Access-Control-Allow-Origin"), "")
	is.NoErr(srv.stop())

	srv = start(t, "-db", "memory:", "-cors-origins", "*")
	res = preflight(t, srv.base+"/api/openpix/v1/charge", "https://any.example")
	is.Equal(res.StatusCode, http.StatusNoContent)
	is.Equal(res.Header.Get("Access-Control-Allow-Origin"), "*") // given explicitly
	is.NoErr(srv.stop())
}
