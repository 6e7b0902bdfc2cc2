package httpadapter

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/pixfoundry/payments"
)

// customerBody is the body of POST /customer. taxID is a string (an object is tolerated).
type customerBody struct {
	Name          string            `json:"name"`
	Email         string            `json:"email"`
	Phone         string            `json:"phone"`
	TaxID         json.RawMessage   `json:"taxID"`
	CorrelationID string            `json:"correlationID"`
	Address       *payments.Address `json:"address"`
}

// params turns the body into the Service's params; taxIDField names the tax ID in errors
// ("customer.taxID" inside a charge).
func (b customerBody) params(taxIDField string) (payments.CreateCustomerParams, error) {
	taxID, err := taxIDString(taxIDField, b.TaxID)
	if err != nil {
		return payments.CreateCustomerParams{}, err
	}
	return payments.CreateCustomerParams{
		Name: b.Name, TaxID: taxID, Email: b.Email, Phone: b.Phone,
		CorrelationID: b.CorrelationID, Address: b.Address,
	}, nil
}

// customerUpdateBody is the body of PATCH /customer/{id}: absent or null fields stay as
// they are, in the address too (only the address fields given change).
type customerUpdateBody struct {
	Name    *string                 `json:"name"`
	Email   *string                 `json:"email"`
	Phone   *string                 `json:"phone"`
	TaxID   json.RawMessage         `json:"taxID"`
	Address *payments.AddressUpdate `json:"address"`
}

// handleCustomerCreate: POST /customer → 200 {customer}.
func handleCustomerCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[customerBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		p, err := body.params("taxID")
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		c, err := company(r).CreateCustomer(r.Context(), p)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, customerReply{Customer: c})
	})
}

// handleCustomerList: GET /customer?skip&limit → 200 {customers, pageInfo}.
func handleCustomerList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := listParams(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		cs, page, err := company(r).ListCustomers(r.Context(), p)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, customerListReply{Customers: cs, PageInfo: page})
	})
}

// handleCustomerGet: GET /customer/{id} (correlationID or tax ID) → 200 {customer}.
func handleCustomerGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := company(r).GetCustomer(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, customerReply{Customer: c})
	})
}

// handleCustomerUpdate: PATCH /customer/{id} (correlationID) → 200 {customer}.
func handleCustomerUpdate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[customerUpdateBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		u := payments.CustomerUpdate{Name: body.Name, Email: body.Email, Phone: body.Phone, AddressUpdate: body.Address}
		if len(body.TaxID) > 0 && string(body.TaxID) != "null" {
			taxID, err := taxIDString("taxID", body.TaxID)
			if err != nil {
				writeError(w, r, log, err)
				return
			}
			u.TaxID = &taxID
		}
		c, err := company(r).UpdateCustomer(r.Context(), r.PathValue("id"), u)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, customerReply{Customer: c})
	})
}

// Replies. Fields are in the order of their JSON names, as a map would write them.
type (
	customerReply struct {
		Customer payments.Customer `json:"customer"`
	}
	customerListReply struct {
		Customers []payments.Customer `json:"customers"`
		PageInfo  payments.PageInfo   `json:"pageInfo"`
	}
)
