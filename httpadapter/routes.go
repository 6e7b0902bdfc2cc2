package httpadapter

import (
	"net/http"
	"strings"

	"github.com/pixfoundry/payments"
)

// addRoutes is the whole API surface. Every API route goes through api, which serves it
// under /api/v1 and the legacy /api/<vendor>/v1; the few routes outside those prefixes go
// through root. auth marks the routes that need an App ID: every one but /health and the
// public QR image. It returns the patterns it registered, for the test that checks each
// one refuses a request without an App ID.
func addRoutes(mux *http.ServeMux, svc *payments.Service, opts Options) (apiPatterns, rootPatterns []string) {
	log := opts.Logger
	auth := requireAuth(svc, log)
	api := apiRoutes(mux, svc.Vendor(), &apiPatterns)
	root := rootRoutes(mux, &rootPatterns)
	vendor := "/" + svc.Vendor()

	root("GET /health", handleHealth())

	// Customers. {id} is a correlationID or a tax ID.
	api("POST /customer", auth(handleCustomerCreate(log)))
	api("GET /customer", auth(handleCustomerList(log)))
	api("GET /customer/{id}", auth(handleCustomerGet(log)))
	api("PATCH /customer/{id}", auth(handleCustomerUpdate(log)))

	// Charges. {id} is a correlationID, transactionID, paymentLinkID or globalID.
	api("POST /charge", auth(handleChargeCreate(log)))
	api("GET /charge", auth(handleChargeList(log)))
	api("GET /charge/{id}", auth(handleChargeGet(log)))
	api("DELETE /charge/{id}", auth(handleChargeDelete(log)))
	api("POST /charge/{id}/refund", auth(handleChargeRefundCreate(log)))
	api("GET /charge/{id}/refund", auth(handleChargeRefundList(log)))

	// Static QR codes. {id} is an id, correlationID, identifier or paymentLinkID.
	api("POST /qrcode-static", auth(handlePixQRCodeCreate(log)))
	api("GET /qrcode-static", auth(handlePixQRCodeList(log)))
	api("GET /qrcode-static/{id}", auth(handlePixQRCodeGet(log)))
	api("DELETE /qrcode-static/{id}", auth(handlePixQRCodeDelete(log)))

	// QR images. The PNG is public: qrCodeImage links to it (see handleQRImagePublic).
	root("GET "+vendor+"/charge/brcode/image/{file}", handleQRImagePublic(svc, log))
	root("GET /api/image/qrcode/base64/{id}", auth(handleQRImageBase64(log)))

	// BR Codes.
	api("POST /decode/emv", auth(handleEMVDecode(log)))

	// Transactions (Pix received) and refunds. {id} is a transactionID or endToEndId, and
	// a refundId or correlationID.
	api("GET /transaction", auth(handleTransactionList(log)))
	api("GET /transaction/{id}", auth(handleTransactionGet(log)))
	api("POST /refund", auth(handleRefundCreate(log)))
	api("GET /refund", auth(handleRefundList(log)))
	api("GET /refund/{id}", auth(handleRefundGet(log)))

	// Accounts. Withdrawals are not offered: 501, at the spec's path and the Node SDK's.
	api("GET /account", auth(handleAccountList(log)))
	api("GET /account/{$}", auth(handleAccountList(log)))
	api("GET /account/{accountId}", auth(handleAccountGet(log)))
	api("POST /account/{accountId}", auth(handleNotImplemented(log, msgNoAccountWithdrawals)))
	api("POST /account/{accountId}/withdraw", auth(handleNotImplemented(log, msgNoAccountWithdrawals)))

	// Subaccounts. {id} is the subaccount's Pix key.
	api("POST /subaccount", auth(handleSubaccountCreate(log)))
	api("GET /subaccount", auth(handleSubaccountList(log)))
	api("GET /subaccount/{id}", auth(handleSubaccountGet(log)))
	api("POST /subaccount/transfer", auth(handleSubaccountTransfer(log)))
	api("POST /subaccount/{id}/withdraw", auth(handleNotImplemented(log, msgNoSubaccountWithdrawals)))
	api("POST /subaccount/{id}/debit", auth(handleNotImplemented(log, msgNoSubaccountDebits)))

	// Exclusive (fidelity) cashback.
	api("POST /cashback-fidelity", auth(handleCashbackCreate(log)))
	api("GET /cashback-fidelity/balance/{taxID}", auth(handleCashbackBalance(log)))

	// Applications of the caller's own company.
	api("POST /application", auth(handleApplicationCreate(log)))
	api("DELETE /application", auth(handleApplicationDelete(log)))

	// Partner operations: pre-registered companies and their applications.
	api("POST /partner/company", auth(handlePreRegistrationCreate(log)))
	api("GET /partner/company", auth(handlePreRegistrationList(log)))
	api("GET /partner/company/{taxID}", auth(handlePreRegistrationGet(log)))
	api("POST /partner/application", auth(handlePartnerApplicationCreate(log)))

	// Sandbox: simulated payments, for the caller's company; absent in production.
	if opts.Sandbox {
		root("GET "+vendor+"/testing", auth(handleSandboxPay(log)))
	}
	return apiPatterns, rootPatterns
}

// rootRoutes returns a function that registers a route as is, outside the API prefixes,
// and appends its pattern to *registered.
func rootRoutes(mux *http.ServeMux, registered *[]string) func(pattern string, h http.Handler) {
	return func(pattern string, h http.Handler) {
		mux.Handle(pattern, h)
		*registered = append(*registered, pattern)
	}
}

// apiRoutes returns a function that registers "METHOD /path" at /api/v1/path and at the
// legacy /api/<vendor>/v1/path, and appends the pattern to *registered.
func apiRoutes(mux *http.ServeMux, vendor string, registered *[]string) func(pattern string, h http.Handler) {
	prefixes := []string{"/api/v1", "/api/" + vendor + "/v1"}
	return func(pattern string, h http.Handler) {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok || !strings.HasPrefix(path, "/") {
			panic("httpadapter: route pattern must be \"METHOD /path\": " + pattern)
		}
		for _, prefix := range prefixes {
			mux.Handle(method+" "+prefix+path, h)
		}
		*registered = append(*registered, pattern)
	}
}
