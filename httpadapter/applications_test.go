package httpadapter_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

func TestApplications(t *testing.T) {
	t.Parallel()
	s := newServer(t, httpadapter.Options{})
	var appID, clientID string
	t.Run("Create", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/application", s.appID, `{"application":{"name":"backoffice","type":"API"}}`)
		mustStatus(t, is, r, http.StatusCreated) // 201, as the wire reference gives
		a := get(r.body, "application")
		is.Equal(str(a, "name"), "backoffice")
		is.Equal(get(a, "isActive"), true)
		is.True(str(a, "clientSecret") != "")
		clientID, appID = str(a, "clientId"), str(a, "appID")
		is.True(clientID != "" && appID != "")
		mustStatus(t, is, s.do(t, "GET", "/api/v1/customer", appID, ""), http.StatusOK) // the new App ID works
	})
	t.Run("CreateFlat", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/application", s.appID, `{"name":"flat"}`)
		mustStatus(t, is, r, http.StatusCreated) // fields at the top level are accepted too
		is.Equal(str(r.body, "application", "type"), "API")
	})
	t.Run("ErrDuplicateName", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/application", s.appID, `{"application":{"name":"backoffice"}}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), `an application named "backoffice" already exists`)
	})
	t.Run("ErrNameMissing", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "POST", "/api/v1/application", s.appID, `{"application":{}}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "application.name is required")
	})
	t.Run("Delete", func(t *testing.T) {
		is := is.New(t)
		r := s.do(t, "DELETE", "/api/v1/application", s.appID, `{"clientId":"`+clientID+`"}`)
		mustStatus(t, is, r, http.StatusOK)
		is.Equal(get(r.body, "success"), true)
		r = s.do(t, "GET", "/api/v1/customer", appID, "")
		mustStatus(t, is, r, http.StatusUnauthorized) // a deleted application's App ID stops working
		r = s.do(t, "DELETE", "/api/v1/application", s.appID, `{"clientId":"Client_Id_nope"}`)
		mustStatus(t, is, r, http.StatusNotFound) // a 404 the reference documents
		is.Equal(r.errMsg(), "Application not found")
		r = s.do(t, "DELETE", "/api/v1/application", s.appID, `{}`)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), "clientId is required")
	})
}

// TestApplications_DeleteLast: a company cannot deactivate its last active application,
// which would leave nothing but 401s.
func TestApplications_DeleteLast(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	raw, err := base64.StdEncoding.DecodeString(s.appID)
	is.NoErr(err)
	clientID, _, _ := strings.Cut(string(raw), ":")
	r := s.do(t, "DELETE", "/api/v1/application", s.appID, `{"clientId":"`+clientID+`"}`)
	mustStatus(t, is, r, http.StatusBadRequest) // refused
	is.Equal(r.errMsg(), "this is the company's last active application: create another one before deactivating it, or the company loses access to the API")
	mustStatus(t, is, s.do(t, "GET", "/api/v1/customer", s.appID, ""), http.StatusOK) // the App ID still works

	r = s.do(t, "POST", "/api/v1/application", s.appID, `{"name":"next"}`)
	mustStatus(t, is, r, http.StatusCreated)
	next := str(r.body, "application", "appID")
	r = s.do(t, "DELETE", "/api/v1/application", next, `{"clientId":"`+clientID+`"}`)
	mustStatus(t, is, r, http.StatusOK)                                                         // with another one active, it may go
	mustStatus(t, is, s.do(t, "GET", "/api/v1/customer", s.appID, ""), http.StatusUnauthorized) // and is gone
	mustStatus(t, is, s.do(t, "GET", "/api/v1/customer", next, ""), http.StatusOK)
}

// TestApplications_FlatBodyFieldNames: a flat body's wrong types are named as sent ("type",
// not the Go name of the struct the fields are embedded from); the same for webhooks.
func TestApplications_FlatBodyFieldNames(t *testing.T) {
	t.Parallel()
	s, _ := newWebhookServer(t)
	for _, tc := range []struct{ path, body, want string }{
		{"/api/v1/application", `{"name":"x","type":5}`, "type must be a string"},
		{"/api/v1/application", `{"name":5}`, "name must be a string"},
		{"/api/v1/application", `{"application":{"name":5}}`, "application.name must be a string"},
		{"/api/v1/webhook", `{"name":"w","url":1}`, "url must be a string"},
		{"/api/v1/webhook", `{"webhook":{"url":1}}`, "webhook.url must be a string"},
	} {
		is := is.New(t)
		r := s.do(t, "POST", tc.path, s.appID, tc.body)
		mustStatus(t, is, r, http.StatusBadRequest)
		is.Equal(r.errMsg(), tc.want)
	}
}
