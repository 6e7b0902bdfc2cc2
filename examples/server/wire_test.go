package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestOversizedHeaders: headers over the handler's limit, though under net/http's, are
// answered 431 in JSON over real HTTP, not net/http's plain text.
func TestOversizedHeaders(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := start(t, "-db", t.TempDir()+"/payments.db")
	req, err := http.NewRequest("GET", srv.base+"/api/v1/customer", nil)
	is.NoErr(err)
	req.Header.Set("X-Big", strings.Repeat("a", 100<<10)) // 100 KiB
	res, err := client.Do(req)
	is.NoErr(err)
	defer res.Body.Close()
	is.Equal(res.StatusCode, http.StatusRequestHeaderFieldsTooLarge)
	is.True(strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"))
	var body map[string]string
	is.NoErr(json.NewDecoder(res.Body).Decode(&body)) // a JSON body
	is.Equal(body["error"], "request header fields too large (limit 65536 bytes)")
}
