package httpadapter

import (
	"log/slog"
	"net/http"

	"github.com/pixfoundry/payments"
)

// applicationFields are an application's fields in a request body.
type applicationFields struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Scopes would restrict what the application may do. This version has no scopes:
	// every application acts on all of its company's routes, so asking for any is a 400
	// (an application believed restricted and not restricted would be worse).
	Scopes []string `json:"scopes"`
}

// noScopes refuses scopes asked for (see applicationFields.Scopes), naming field.
func (f applicationFields) noScopes(field string) error {
	if len(f.Scopes) > 0 {
		return invalid(field, "%s are not offered: an application has access to every route of its company; leave %s out", field, field)
	}
	return nil
}

// applicationCreateBody is the body of POST /application: {application:{name,type}}, or
// the same fields at the top level.
type applicationCreateBody struct {
	Application *applicationFields `json:"application"`
	applicationFields
}

func (b applicationCreateBody) params() (payments.CreateApplicationParams, error) {
	f, field := b.applicationFields, "scopes"
	if b.Application != nil {
		f, field = *b.Application, "application.scopes"
	}
	return payments.CreateApplicationParams{Name: f.Name, Type: payments.ApplicationType(f.Type)}, f.noScopes(field)
}

// applicationView is an application as returned: with its appID when the secret is known
// (only in the response that created it).
type applicationView struct {
	payments.Application
	AppID  string   `json:"appID,omitempty"`
	Scopes []string `json:"scopes"` // always empty: no restriction (see applicationFields.Scopes)
}

func viewApplication(a payments.Application) applicationView {
	return applicationView{Application: a, AppID: a.AppID(), Scopes: []string{}}
}

// handleApplicationCreate: POST /application → 201 {application:{...,clientId,clientSecret,
// appID}} for the caller's own company. The secret is shown only in this response.
func handleApplicationCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[applicationCreateBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		p, err := body.params()
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		a, err := company(r).CreateApplication(r.Context(), p)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusCreated, applicationReply{Application: viewApplication(a)})
	})
}

// handleApplicationDelete: DELETE /application {clientId} → 200 {success:true}. The
// application is deactivated: its App ID stops working. An unknown clientId is 404
// {"error":"Application not found"}, as the reference documents.
func handleApplicationDelete(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[struct {
			ClientID string `json:"clientId"`
		}](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if body.ClientID == "" {
			writeError(w, r, log, invalid("clientId", "clientId is required"))
			return
		}
		if _, err := company(r).DeactivateApplication(r.Context(), body.ClientID); err != nil {
			writeErrorLookup(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, successReply{Success: true})
	})
}

// Replies.
type (
	applicationReply struct {
		Application applicationView `json:"application"`
	}
	successReply struct {
		Success bool `json:"success"`
	}
)
