package httpadapter

import (
	"log/slog"
	"net/http"

	"github.com/pixfoundry/payments"
)

// pixKeyListReply is the reply of GET /pix-keys: the company's keys and the account they
// lead to (its default account).
type pixKeyListReply struct {
	PixKeys []payments.PixKey `json:"pixKeys"`
	Account payments.Account  `json:"account"`
}

// pixKeyBody is the body of POST /pix-keys (the document's PixKeyCreate).
type pixKeyBody struct {
	Key  string `json:"key"`
	Type string `json:"type"`
}

// pixKeyCheckBody is the body of POST /pix-keys/check.
type pixKeyCheckBody struct {
	PixKey string `json:"pixKey"`
}

// handlePixKeyList: GET /pix-keys ?skip&limit → 200 {pixKeys:[{key, type, isDefault}],
// account}: the company's Pix keys, the default first, and its default account.
func handlePixKeyList(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := listParams(r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		keys, acct, err := company(r).ListPixKeys(r.Context(), p)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, pixKeyListReply{PixKeys: keys, Account: acct})
	})
}

// handlePixKeyCreate: POST /pix-keys {key, type CNPJ|EVP} → 201 {key, type, isDefault}. A
// CNPJ key is the company's own tax ID; an EVP key is generated (the body's key is not
// read). A key another company holds is 400 naming "key".
func handlePixKeyCreate(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[pixKeyBody](r)
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		k, err := company(r).CreatePixKey(r.Context(), payments.CreatePixKeyParams{Key: body.Key, Type: body.Type})
		if err != nil {
			writeError(w, r, log, err)
			return
		}
		encode(w, http.StatusCreated, k)
	})
}

// handlePixKeyDelete: DELETE /pix-keys/{pixKey} → 204, no body. The default key is 400
// (set another default first); a key that is not the company's is 404, as the document
// says.
func handlePixKeyDelete(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := company(r).DeletePixKey(r.Context(), r.PathValue("pixKey")); err != nil {
			writeErrorLookup(w, r, log, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// handlePixKeyDefault: PUT /pix-keys/{pixKey}/default → 200 {key, type, isDefault: true}:
// the key becomes the company's default, the one new BR Codes carry. A key that is not the
// company's is 404.
func handlePixKeyDefault(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, err := company(r).SetDefaultPixKey(r.Context(), r.PathValue("pixKey"))
		if err != nil {
			writeErrorLookup(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, k)
	})
}

// handlePixKeyCheck: GET /pix-keys/{pixKey}/check, and POST /pix-keys/check {pixKey} (body
// true) → 200 {pixKey, type, pixKeyEndToEndId, owner:{account, branch, psp, name,
// taxID}}: who owns the key, as the bank's directory says. A key nobody owns is 404, as
// the document says; a bank that looks up no keys is 501; one that does not answer, 503.
func handlePixKeyCheck(log *slog.Logger, body bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.PathValue("pixKey")
		if body {
			b, err := decode[pixKeyCheckBody](r)
			if err != nil {
				writeError(w, r, log, err)
				return
			}
			key = b.PixKey
		}
		c, err := company(r).CheckPixKey(r.Context(), key)
		if err != nil {
			writeErrorLookup(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, c)
	})
}
