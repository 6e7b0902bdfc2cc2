package httpadapter

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/pixfoundry/payments"
)

// preRegistrationBody is the body of POST /partner/company.
type preRegistrationBody struct {
	PreRegistration struct {
		Name    string          `json:"name"`
		TaxID   json.RawMessage `json:"taxID"` // {taxID, type}; a string is tolerated
		Website string          `json:"website"`
	} `json:"preRegistration"`
	User payments.PreRegistrationUser `json:"user"`
}

// partnerApplicationBody is the body of POST /partner/application.
type partnerApplicationBody struct {
	Application applicationFields `json:"application"`
	TaxID       json.RawMessage   `json:"taxID"` // {taxID, type}; a string is tolerated
}

// partnerPageInfo is pageInfo with the errors array the pre-registration list carries.
type partnerPageInfo struct {
	payments.PageInfo
	Errors []errorMessage `json:"errors"`
}

// createdStatus is 201 for a new resource and 200 for an existing one returned again.
func createdStatus(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

// handlePreRegistrationCreate: POST /partner/company → 201 (new) or 200 (tax ID already
// pre-registered) {preRegistration:{name,website,taxID}, user}; 403 for a non-partner.
func handlePreRegistrationCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[preRegistrationBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		taxID, err := taxIDString("preRegistration.taxID", body.PreRegistration.TaxID)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		pr, created, err := company(r).CreatePreRegistration(r.Context(), payments.CreatePreRegistrationParams{
			Name: body.PreRegistration.Name, TaxID: taxID, Website: body.PreRegistration.Website, User: body.User,
		})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, createdStatus(created), preRegistrationCreatedReply{PreRegistration: pr.Details, User: pr.User})
	})
}

// handlePreRegistrationList: GET /partner/company?skip&limit → 200 {preRegistrations:
// [{preRegistration,user,company,account}], pageInfo}.
func handlePreRegistrationList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prs, page, ok := preRegistrationPage(w, r, log)
		if ok {
			encode(w, http.StatusOK, preRegistrationListReply{PageInfo: page, PreRegistrations: prs})
		}
	})
}

// preRegistrationPage is the page of the caller's pre-registrations that skip and limit
// ask for, with the partner lists' pageInfo; when it fails it has answered, and ok is false.
func preRegistrationPage(w http.ResponseWriter, r *http.Request, log *slog.Logger) (prs []payments.PreRegistration, page partnerPageInfo, ok bool) {
	p, err := listParams(r)
	if err == nil {
		var info payments.PageInfo
		prs, info, err = company(r).ListPreRegistrations(r.Context(), p)
		page = partnerPageInfo{PageInfo: info, Errors: []errorMessage{}}
	}
	if err != nil {
		writeError(w, r, log, err)
		return nil, page, false
	}
	return prs, page, true
}

// handleAffiliateList: GET /partner/affiliate?skip&limit → 200 {affiliates, pageInfo}: the
// companies the caller manages, which here are the companies it pre-registered (POST
// /partner/company), oldest first, each as {company:{id,name,taxID}, account:{clientId}},
// the document's CompanyObjectPayload and AccountObjectPayload; account is absent until
// the partner has created the company's application (POST /partner/application). Only a
// partner may call it, as the other partner operations.
func handleAffiliateList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prs, page, ok := preRegistrationPage(w, r, log)
		if !ok {
			return
		}
		reply := affiliateListReply{Affiliates: make([]affiliate, len(prs)), PageInfo: page}
		for i, pr := range prs {
			reply.Affiliates[i].Company = pr.Company
			if pr.Account.ClientID != "" {
				reply.Affiliates[i].Account = &pr.Account
			}
		}
		encode(w, http.StatusOK, reply)
	})
}

// handlePreRegistrationGet: GET /partner/company/{taxID} → 200 {preRegistration:
// {preRegistration,user,company,account}}.
func handlePreRegistrationGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, err := company(r).GetPreRegistration(r.Context(), r.PathValue("taxID"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, preRegistrationReply{PreRegistration: pr})
	})
}

// handlePartnerApplicationCreate: POST /partner/application → 201 (new) {application:
// {...,clientId,clientSecret,appID}} or 200 (that name exists) {application} without the
// secret, which cannot be shown again.
func handlePartnerApplicationCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[partnerApplicationBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		if err := body.Application.noScopes("application.scopes"); err != nil {
			writeError(w, r, log, err)
			return
		}
		taxID, err := taxIDString("taxID", body.TaxID)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		a, created, err := company(r).CreatePartnerApplication(r.Context(), taxID, payments.CreateApplicationParams{
			Name: body.Application.Name, Type: payments.ApplicationType(body.Application.Type),
		})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, createdStatus(created), applicationReply{Application: viewApplication(a)})
	})
}

// Replies. Fields are in the order of their JSON names, as a map would write them.
type (
	preRegistrationCreatedReply struct {
		PreRegistration payments.PreRegistrationDetails `json:"preRegistration"`
		User            payments.PreRegistrationUser    `json:"user"`
	}
	preRegistrationReply struct {
		PreRegistration payments.PreRegistration `json:"preRegistration"`
	}
	preRegistrationListReply struct {
		PageInfo         partnerPageInfo            `json:"pageInfo"`
		PreRegistrations []payments.PreRegistration `json:"preRegistrations"`
	}
	affiliate struct {
		Account *payments.PreRegistrationAccount `json:"account,omitempty"`
		Company payments.CompanyRef              `json:"company"`
	}
	affiliateListReply struct {
		Affiliates []affiliate     `json:"affiliates"`
		PageInfo   partnerPageInfo `json:"pageInfo"`
	}
)
