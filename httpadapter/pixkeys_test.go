package httpadapter

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// The Pix key routes that read a body have fuzz targets and valid bodies here, and their
// operations notes, joined to the tables of fuzz_test.go, routes_test.go and
// operations_test.go.
func FuzzPixKeyCreate(f *testing.F) { fuzzRoute(f, "POST /pix-keys") }
func FuzzPixKeyCheck(f *testing.F)  { fuzzRoute(f, "POST /pix-keys/check") }

// pixKeyServer is the handler over a memory-store Service whose default company has the
// key pix@loja.example.com, with App IDs of that company and of a second one.
type pixKeyServer struct {
	svc          *payments.Service
	h            http.Handler
	mine, theirs string // App IDs
}

func newPixKeyServer(t *testing.T) pixKeyServer {
	t.Helper()
	ctx := context.Background()
	svc, err := payments.New(memory.New(), payments.Options{Clock: payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)),
		DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := svc.CreateApplication(ctx, payments.CreateApplicationParams{Name: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	co, err := svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Other", PixKey: "b@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.Company(ctx, co.ID)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := other.CreateApplication(ctx, payments.CreateApplicationParams{Name: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	return pixKeyServer{svc: svc, h: New(svc, Options{Logger: slog.New(slog.DiscardHandler), Sandbox: true}), mine: mine.AppID(), theirs: theirs.AppID()}
}

// send sends a request with appID and returns the status and the decoded JSON body (nil
// for none).
func (s pixKeyServer) send(t *testing.T, appID, method, path, body string) (int, map[string]any) {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", appID)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	if w.Body.Len() == 0 {
		return w.Code, nil
	}
	var out map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: %d %q is not a JSON object", method, path, w.Code, w.Body.String())
	}
	return w.Code, out
}

// keysOf is the keys of a GET /pix-keys reply, each "key type" with " default" added to
// the default one.
func keysOf(reply map[string]any) []string {
	var out []string
	list, _ := reply["pixKeys"].([]any)
	for _, v := range list {
		k, _ := v.(map[string]any)
		s := k["key"].(string) + " " + k["type"].(string)
		if k["isDefault"] == true {
			s += " default"
		}
		out = append(out, s)
	}
	return out
}

func TestPixKeys_Routes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newPixKeyServer(t)

	status, reply := s.send(t, s.mine, "GET", "/api/v1/pix-keys", "")
	is.Equal(status, http.StatusOK)
	is.Equal(keysOf(reply), []string{"pix@loja.example.com EMAIL default"}) // the company's key
	acct, _ := reply["account"].(map[string]any)
	is.Equal(acct["isDefault"], true) // and its account
	is.True(acct["accountId"] != "")

	status, reply = s.send(t, s.mine, "POST", "/api/v1/pix-keys", `{"key":"string","type":"EVP"}`)
	is.Equal(status, http.StatusCreated) // as the document says
	evp, _ := reply["key"].(string)
	is.Equal(len(evp), 36) // a generated UUID
	is.Equal(reply["type"], "EVP")
	is.Equal(reply["isDefault"], false)
	status, reply = s.send(t, s.mine, "POST", "/api/openpix/v1/pix-keys", `{"key":"11222333000181","type":"CNPJ"}`)
	is.Equal(status, http.StatusCreated) // under the legacy prefix too
	is.Equal(reply["key"], "11222333000181")

	status, reply = s.send(t, s.mine, "PUT", "/api/v1/pix-keys/"+evp+"/default", "")
	is.Equal(status, http.StatusOK)
	is.Equal(reply["isDefault"], true)
	_, reply = s.send(t, s.mine, "GET", "/api/v1/pix-keys", "")
	is.Equal(keysOf(reply), []string{evp + " EVP default", "11222333000181 CNPJ", "pix@loja.example.com EMAIL"}) // the old default stays
	_, reply = s.send(t, s.mine, "GET", "/api/v1/pix-keys?skip=1&limit=1", "")
	is.Equal(keysOf(reply), []string{"11222333000181 CNPJ"}) // a page

	status, reply = s.send(t, s.mine, "DELETE", "/api/v1/pix-keys/"+evp, "")
	is.Equal(status, http.StatusBadRequest) // not the default
	is.True(strings.Contains(reply["error"].(string), "set another key as the default first"))
	status, reply = s.send(t, s.mine, "DELETE", "/api/v1/pix-keys/pix@loja.example.com", "")
	is.Equal(status, http.StatusNoContent) // as the document says
	is.Equal(reply, nil)                   // no body
	status, _ = s.send(t, s.mine, "DELETE", "/api/v1/pix-keys/pix@loja.example.com", "")
	is.Equal(status, http.StatusNotFound) // gone
	_, reply = s.send(t, s.mine, "GET", "/api/v1/pix-keys", "")
	is.Equal(keysOf(reply), []string{evp + " EVP default", "11222333000181 CNPJ"})
}

func TestPixKeys_CompanyIsolation(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newPixKeyServer(t)
	status, _ := s.send(t, s.mine, "POST", "/api/v1/pix-keys", `{"key":"11222333000181","type":"CNPJ"}`)
	is.Equal(status, http.StatusCreated)

	_, reply := s.send(t, s.theirs, "GET", "/api/v1/pix-keys", "")
	is.Equal(keysOf(reply), []string{"b@example.com EMAIL default"}) // only its own keys
	status, _ = s.send(t, s.theirs, "DELETE", "/api/v1/pix-keys/11222333000181", "")
	is.Equal(status, http.StatusNotFound) // cannot delete the other company's
	status, _ = s.send(t, s.theirs, "PUT", "/api/v1/pix-keys/11222333000181/default", "")
	is.Equal(status, http.StatusNotFound) // nor make it its default
	status, _ = s.send(t, s.theirs, "PUT", "/api/v1/pix-keys/pix@loja.example.com/default", "")
	is.Equal(status, http.StatusNotFound)
	status, reply = s.send(t, s.theirs, "POST", "/api/v1/pix-keys", `{"key":"11222333000181","type":"CNPJ"}`)
	is.Equal(status, http.StatusBadRequest) // nor take it
	is.True(strings.Contains(reply["error"].(string), "belongs to another company"))

	_, reply = s.send(t, s.mine, "GET", "/api/v1/pix-keys", "")
	is.Equal(keysOf(reply), []string{"pix@loja.example.com EMAIL default", "11222333000181 CNPJ"}) // untouched
}

func TestPixKeys_Check(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newPixKeyServer(t)
	for _, req := range []struct{ method, path, body string }{
		{"GET", "/api/v1/pix-keys/bruno@example.com/check", ""},
		{"POST", "/api/v1/pix-keys/check", `{"pixKey":"bruno@example.com"}`},
	} {
		status, reply := s.send(t, s.mine, req.method, req.path, req.body)
		is.Equal(status, http.StatusOK)
		is.Equal(reply["pixKey"], "bruno@example.com")
		is.Equal(reply["type"], "EMAIL")
		e2e, _ := reply["pixKeyEndToEndId"].(string)
		is.Equal(len(e2e), 32) // the sandbox's look-up id
		owner, _ := reply["owner"].(map[string]any)
		for _, f := range []string{"account", "branch", "psp", "name", "taxID"} {
			v, _ := owner[f].(string)
			is.True(v != "") // every owner field of the document
		}
	}
	status, _ := s.send(t, s.mine, "GET", "/api/v1/pix-keys/pix-key-not-found@woovi.com/check", "")
	is.Equal(status, http.StatusNotFound) // nobody's key: 404, as the document says
}

func TestPixKeys_BadInput(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newPixKeyServer(t)
	for _, c := range []struct{ method, path, body, field string }{
		{"POST", "/api/v1/pix-keys", `{}`, "type"},
		{"POST", "/api/v1/pix-keys", `{"key":"a@example.com","type":"EMAIL"}`, "type"},
		{"POST", "/api/v1/pix-keys", `{"key":"123","type":"CNPJ"}`, "key"},
		{"POST", "/api/v1/pix-keys", `{"key":5,"type":"CNPJ"}`, "key"},
		{"POST", "/api/v1/pix-keys", `{"type":["EVP"]}`, "type"},
		{"POST", "/api/v1/pix-keys/check", `{}`, "pixKey"},
		{"POST", "/api/v1/pix-keys/check", `{"pixKey":"nope"}`, "pixKey"},
		{"GET", "/api/v1/pix-keys/nope/check", "", "pixKey"},
		{"DELETE", "/api/v1/pix-keys/nope", "", "pixKey"},
		{"PUT", "/api/v1/pix-keys/nope/default", "", "pixKey"},
		{"GET", "/api/v1/pix-keys?limit=0", "", "limit"},
		{"GET", "/api/v1/pix-keys?skip=-1", "", "skip"},
	} {
		status, reply := s.send(t, s.mine, c.method, c.path, c.body)
		is.Equal(status, http.StatusBadRequest) // bad input is 400
		msg, _ := reply["error"].(string)
		is.True(strings.Contains(msg, c.field)) // naming the field
	}
	status, _ := s.send(t, "", "GET", "/api/v1/pix-keys", "")
	is.Equal(status, http.StatusUnauthorized) // behind auth
}
