package httpadapter

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pixfoundry/payments"
)

// addDisputeRoutes registers disputes (MED) against the company's received Pix, and, on
// the sandbox, the routes that open and decide one (with a real PSP both come from the
// bank's infraction reports, which the apipix driver does not fetch yet).
func addDisputeRoutes(k routeKit) {
	k.api("GET /dispute", k.auth(handleDisputeList(k.log)))
	k.api("GET /dispute/{id}", k.auth(handleDisputeGet(k.log)))
	// The document writes the path /dispute/:id/evidence; {id} is the same segment.
	k.api("POST /dispute/{id}/evidence", k.auth(handleDisputeEvidence(k.log)))
	if k.opts.Sandbox {
		for _, v := range k.vendors {
			k.root("POST /"+v+"/testing/dispute", k.auth(handleSandboxDisputeOpen(k.log)))
			k.root("POST /"+v+"/testing/dispute/{id}/decide", k.auth(handleSandboxDisputeDecide(k.log)))
		}
	}
}

// The official document names the status of an open dispute in two ways: CREATED in the
// GET /dispute/{id} schema (CREATED, ACCEPTED, REJECTED, CANCELED) and IN_REVIEW in the
// GET /dispute items' (IN_REVIEW, ACCEPTED, REJECTED, CANCELED); its webhook payload
// (DisputePayload) has both. The Service keeps both (CREATED until the company sends
// evidence, IN_REVIEW after) and the events carry them as they are; each route answers
// with its own schema's name for an open dispute, so that a client validating against
// the document accepts every answer.
func wireDisputeStatus(s payments.DisputeStatus, open payments.DisputeStatus) string {
	if s.Open() {
		return string(open)
	}
	return string(s)
}

// disputeView is the dispute of GET /dispute/{id}: the document's schema, whose value is a
// string (of centavos, "10000"), with the dispute's createdAt and updatedAt besides.
type disputeView struct {
	Status        string    `json:"status"`
	Name          string    `json:"name"`
	Email         string    `json:"email"`
	PhoneNumber   string    `json:"phoneNumber"`
	Value         string    `json:"value"`
	DisputeReason string    `json:"disputeReason"`
	EndToEndID    string    `json:"endToEndId"`
	Type          string    `json:"type"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

func viewDispute(d payments.Dispute) disputeView {
	return disputeView{
		Status: wireDisputeStatus(d.Status, payments.DisputeCreated), Name: d.Name, Email: d.Email,
		PhoneNumber: d.PhoneNumber, Value: strconv.FormatInt(d.Value, 10), DisputeReason: d.Reason,
		EndToEndID: d.EndToEndID, Type: string(d.Type), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
	}
}

// disputeItem is a dispute of GET /dispute: the document's Dispute schema (value a number
// of centavos) with its type.
type disputeItem struct {
	Status        string    `json:"status"`
	Name          string    `json:"name"`
	Email         string    `json:"email"`
	PhoneNumber   string    `json:"phoneNumber"`
	Value         int64     `json:"value"`
	DisputeReason string    `json:"disputeReason"`
	EndToEndID    string    `json:"endToEndId"`
	Type          string    `json:"type"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

func disputeListItem(d payments.Dispute) disputeItem {
	return disputeItem{
		Status: wireDisputeStatus(d.Status, payments.DisputeInReview), Name: d.Name, Email: d.Email,
		PhoneNumber: d.PhoneNumber, Value: d.Value, DisputeReason: d.Reason,
		EndToEndID: d.EndToEndID, Type: string(d.Type), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
	}
}

// Replies.
type (
	disputeReply struct {
		Dispute disputeView `json:"dispute"`
	}
	disputeListReply struct {
		Disputes []disputeItem     `json:"disputes"`
		PageInfo payments.PageInfo `json:"pageInfo"`
	}
	evidenceDocument struct {
		URL           string `json:"url"`
		CorrelationID string `json:"correlationID"`
		Description   string `json:"description"`
	}
	evidenceBody struct {
		Documents []evidenceDocument `json:"documents"`
	}
)

// handleDisputeList: GET /dispute?start&end&skip&limit → 200 {disputes, pageInfo}, newest
// first, created between start and end (RFC 3339, inclusive).
func handleDisputeList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var f payments.DisputeFilter
		var err error
		if f.ListParams, err = listParams(r); err == nil {
			if f.Start, err = queryTime(r, "start"); err == nil {
				f.End, err = queryTime(r, "end")
			}
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		ds, page, err := company(r).ListDisputes(r.Context(), f)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		reply := disputeListReply{Disputes: make([]disputeItem, len(ds)), PageInfo: page}
		for i, d := range ds {
			reply.Disputes[i] = disputeListItem(d)
		}
		encode(w, http.StatusOK, reply)
	})
}

// handleDisputeGet: GET /dispute/{id} → 200 {dispute}. The id is the endToEndId of the
// disputed Pix, as the document says. An unknown one is 400 "Dispute not found", the
// document's answer.
func handleDisputeGet(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := company(r).GetDispute(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, disputeReply{Dispute: viewDispute(d)})
	})
}

// handleDisputeEvidence: POST /dispute/{id}/evidence {documents:[{url, correlationID,
// description}]} → 200 {documents}: every document the dispute holds, those sent before
// included. The document sends links to the company's files, not the files: url must be
// http or https (payments.Service.AddDisputeEvidence). A decided dispute takes no more
// (400).
func handleDisputeEvidence(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := decode[evidenceBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		docs := make([]payments.DisputeDocument, len(req.Documents))
		for i, doc := range req.Documents {
			docs[i] = payments.DisputeDocument{URL: doc.URL, CorrelationID: doc.CorrelationID, Description: doc.Description}
		}
		d, err := company(r).AddDisputeEvidence(r.Context(), r.PathValue("id"), docs)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		reply := evidenceBody{Documents: make([]evidenceDocument, len(d.Documents))}
		for i, doc := range d.Documents {
			reply.Documents[i] = evidenceDocument{URL: doc.URL, CorrelationID: doc.CorrelationID, Description: doc.Description}
		}
		encode(w, http.StatusOK, reply)
	})
}

// handleSandboxDisputeOpen: POST /<vendor>/testing/dispute {endToEndId | transactionID,
// reason} opens a MED dispute against a Pix the caller's company received
// (payments.Service.CreateDispute: its value is blocked, OPENPIX:DISPUTE_CREATED is
// written) → 200 {dispute}. Opening one again for the same Pix answers the first.
func handleSandboxDisputeOpen(log *slog.Logger) http.Handler {
	type request struct {
		EndToEndID    string `json:"endToEndId"`
		TransactionID string `json:"transactionID"`
		Reason        string `json:"reason"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := decode[request](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		pix := req.EndToEndID
		switch {
		case strings.TrimSpace(req.EndToEndID) != "" && strings.TrimSpace(req.TransactionID) != "":
			err = invalid("endToEndId", "give endToEndId or transactionID, not both")
		case strings.TrimSpace(pix) == "":
			pix = req.TransactionID
			if strings.TrimSpace(pix) == "" {
				err = invalid("endToEndId", "endToEndId (or transactionID) of a received Pix is required")
			}
		}
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		d, err := company(r).CreateDispute(r.Context(), payments.CreateDisputeParams{Transaction: pix, Reason: req.Reason})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, disputeReply{Dispute: viewDispute(d)})
	})
}

// handleSandboxDisputeDecide: POST /<vendor>/testing/dispute/{id}/decide {outcome:
// ACCEPTED | REJECTED | CANCELED} decides the open dispute of the Pix with the endToEndId
// id (payments.Service.DecideDispute: ACCEPTED sends the money back to the payer through
// the sandbox bank, which settles it at once; the others release it) → 200 {dispute}.
// Deciding again with the same outcome answers the dispute and moves nothing.
func handleSandboxDisputeDecide(log *slog.Logger) http.Handler {
	type request struct {
		Outcome string `json:"outcome"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := decode[request](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		outcome := payments.DisputeStatus(strings.ToUpper(strings.TrimSpace(req.Outcome)))
		d, err := company(r).DecideDispute(r.Context(), r.PathValue("id"), outcome)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, disputeReply{Dispute: viewDispute(d)})
	})
}
