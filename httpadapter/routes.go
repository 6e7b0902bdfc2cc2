package httpadapter

import (
	"net/http"
	"slices"
	"strings"

	"github.com/pixfoundry/payments"
)

// addRoutes is the whole API surface. Every API route goes through api, which serves it
// under /api/v1 and the legacy /api/<vendor>/v1; the few routes outside those prefixes go
// through root. auth marks the routes that need an App ID: every one but /health, the
// webhook public keys, the public QR image and the payment link page's routes. It returns
// the patterns it registered, for the test that checks each one refuses a request without
// an App ID, and for allowMethods.
//
// Operations of the real API this version does not offer yet are registered at their real
// method and path, behind auth, answering 501 {"error":"... not offered in this version"}
// (notOffered): a later version replaces the handler, and a client meanwhile learns the
// operation exists but is not available, rather than a 404 for a route it knows is there.
func addRoutes(mux *http.ServeMux, svc *payments.Service, opts Options) (apiPatterns, rootPatterns []string) {
	log := opts.Logger
	auth := requireAuth(svc, log)
	api := apiRoutes(mux, svc.Vendor(), &apiPatterns)
	root := rootRoutes(mux, &rootPatterns)
	names := vendorNames(svc.Vendor())
	notOffered := func(what string) http.Handler {
		return auth(handleNotImplemented(log, what+" not offered in this version"))
	}

	root("GET /health", handleHealth(svc, log))

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
	api("PATCH /charge/{id}", auth(handleChargeExpiryUpdate(log)))

	// Static QR codes. {id} is an id, correlationID, identifier or paymentLinkID.
	api("POST /qrcode-static", auth(handlePixQRCodeCreate(log)))
	api("GET /qrcode-static", auth(handlePixQRCodeList(log)))
	api("GET /qrcode-static/{id}", auth(handlePixQRCodeGet(log)))
	api("DELETE /qrcode-static/{id}", auth(handlePixQRCodeDelete(log)))

	// QR images. The PNG is public: qrCodeImage links to it (see handleQRImagePublic).
	for _, v := range names {
		root("GET "+qrImagePrefix(v)+"{file}", handleQRImagePublic(svc, log))
	}
	root("GET /api/image/qrcode/base64/{id}", auth(handleQRImageBase64(log)))

	// The payment link page that paymentLinkUrl opens, public like the link, with the
	// status it polls and, in the sandbox only, its "Simulate payment" button (paylink.go).
	root("GET /pay/{paymentLinkID}", handlePayLinkPage(svc, opts))
	root("GET /pay/{paymentLinkID}/status", handlePayLinkStatus(svc, log))
	if opts.Sandbox {
		root("POST /pay/{paymentLinkID}/simulate", handlePayLinkSimulate(svc, opts.BaseURL, log))
	}

	// BR Codes.
	api("POST /decode/emv", auth(handleEMVDecode(log)))

	// Transactions (Pix received) and refunds. {id} is a transactionID or endToEndId, and
	// a refundId or correlationID.
	api("GET /transaction", auth(handleTransactionList(log)))
	api("GET /transaction/{id}", auth(handleTransactionGet(log)))
	api("POST /refund", auth(handleRefundCreate(log)))
	api("GET /refund", auth(handleRefundList(log)))
	api("GET /refund/{id}", auth(handleRefundGet(log)))

	// Accounts. A withdrawal is at the spec's path and at the Node SDK's (POST on the
	// account itself, {accountId, value}, answered {account, transaction}).
	api("GET /account", auth(handleAccountList(log)))
	api("GET /account/{$}", auth(handleAccountList(log)))
	api("GET /account/{accountId}", auth(handleAccountGet(log)))
	api("POST /account/{accountId}", auth(handleAccountWithdraw(log, true)))
	api("POST /account/{accountId}/withdraw", auth(handleAccountWithdraw(log, false)))
	api("POST /account", auth(handleAccountCreate(log)))

	// Subaccounts. {id} is the subaccount's Pix key.
	api("POST /subaccount", auth(handleSubaccountCreate(log)))
	api("GET /subaccount", auth(handleSubaccountList(log)))
	api("GET /subaccount/{id}", auth(handleSubaccountGet(log)))
	api("POST /subaccount/transfer", auth(handleSubaccountTransfer(log)))
	api("POST /subaccount/{id}/withdraw", auth(handleSubaccountWithdraw(log)))
	api("POST /subaccount/{id}/debit", auth(handleSubaccountDebit(log)))
	api("POST /subaccount/{id}/credit", auth(handleSubaccountCredit(log)))

	// The company's Pix keys (its default account's), and the look-up of anyone's key in
	// the bank's directory. {pixKey} is a Pix key.
	api("GET /pix-keys", auth(handlePixKeyList(log)))
	api("POST /pix-keys", auth(handlePixKeyCreate(log)))
	api("DELETE /pix-keys/{pixKey}", auth(handlePixKeyDelete(log)))
	api("PUT /pix-keys/{pixKey}/default", auth(handlePixKeyDefault(log)))
	api("GET /pix-keys/{pixKey}/check", auth(handlePixKeyCheck(log, false)))
	api("POST /pix-keys/check", auth(handlePixKeyCheck(log, true)))

	// Transfers between the company's accounts, named by their Pix keys.
	api("POST /transfer", auth(handleTransferCreate(log)))

	// Outgoing payments: request, then approve. {id} is an id or correlationID.
	api("POST /payment", auth(handlePaymentCreate(log)))
	api("POST /payment/approve", auth(handlePaymentApprove(log)))
	api("GET /payment", auth(handlePaymentList(log)))
	api("GET /payment/{id}", auth(handlePaymentGet(log)))

	// Subscriptions. {id} is a globalID or correlationID. Their charges are generated by
	// the periodic pass and listed by GET /charge?subscription=<correlationID>.
	api("POST /subscriptions", auth(handleSubscriptionCreate(log)))
	api("GET /subscriptions", auth(handleSubscriptionList(log)))
	api("GET /subscriptions/{id}", auth(handleSubscriptionGet(log)))
	api("PUT /subscriptions/{id}/cancel", auth(handleSubscriptionCancel(log)))

	// Webhooks: registrations of the caller's company, the event catalogue, and the keys
	// that verify x-webhook-signature (public, like the real API's). Delivery is the
	// Service's (RunWebhooks) through Options.WebhookSender (NewWebhookSender). The source
	// addresses deliveries leave from, Options.WebhookIPs, are GET /webhook/ips (company.go).
	api("GET /webhook/events", auth(handleWebhookEvents()))
	api("POST /webhook", auth(handleWebhookCreate(log)))
	api("GET /webhook", auth(handleWebhookList(log)))
	api("DELETE /webhook/{id}", auth(handleWebhookDelete(log)))
	api("GET /webhook/public-keys", handleWebhookPublicKeys(svc, log))
	// The spec's /<vendor>/api/v1/webhook variant (e.g. /openpix/api/v1/webhook): the same
	// handlers. Nothing else lives under /<vendor>/api, so it clashes with neither
	// /<vendor>/testing nor /<vendor>/charge/brcode/image.
	for _, v := range names {
		root("POST /"+v+"/api/v1/webhook", auth(handleWebhookCreate(log)))
		root("GET /"+v+"/api/v1/webhook", auth(handleWebhookList(log)))
		root("DELETE /"+v+"/api/v1/webhook/{id}", auth(handleWebhookDelete(log)))
	}

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
	api("GET /partner/affiliate", auth(handleAffiliateList(log)))

	// Nouns whose routes sit in their own files: statements, Pix Automático (installments
	// and a subscription's value), disputes (MED), and the company with closing accounts.
	k := routeKit{api: api, root: root, auth: auth, notOffered: notOffered, svc: svc, opts: opts, log: log, vendors: names}
	addStatementRoutes(k)
	addPixAutomaticRoutes(k)
	addDisputeRoutes(k)
	addCompanyRoutes(k)

	// The rest of the official documents' operations, not offered: 501 naming each
	// (notoffered.go).
	addNotOffered(api, auth, log)

	// Sandbox: simulated payments, for the caller's company, and the server's clock (one
	// for every company); absent in production.
	if opts.Sandbox {
		for _, v := range names {
			root("GET /"+v+"/testing", auth(handleSandboxPay(log)))
			root("GET /"+v+"/testing/clock", auth(handleSandboxClockGet(log, opts.Clock)))
			root("POST /"+v+"/testing/clock", auth(handleSandboxClockAdvance(log, opts.Clock)))
		}
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
	prefixes := apiPrefixes(vendor)
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

// allowedMethods maps each literal path of patterns (one without wildcards) to the value
// of the Allow header for it: its methods, sorted, HEAD with GET. apiPatterns are served
// under both API prefixes (see apiRoutes).
func allowedMethods(vendor string, apiPatterns, rootPatterns []string) map[string]string {
	methods := map[string][]string{}
	add := func(pattern string, prefixes ...string) {
		method, path, _ := strings.Cut(pattern, " ")
		path = strings.TrimSuffix(path, "{$}")
		if strings.Contains(path, "{") {
			return
		}
		for _, prefix := range prefixes {
			methods[prefix+path] = append(methods[prefix+path], method)
			if method == http.MethodGet {
				methods[prefix+path] = append(methods[prefix+path], http.MethodHead)
			}
		}
	}
	for _, p := range apiPatterns {
		add(p, apiPrefixes(vendor)...)
	}
	for _, p := range rootPatterns {
		add(p, "")
	}
	allow := make(map[string]string, len(methods))
	for path, ms := range methods {
		slices.Sort(ms)
		allow[path] = strings.Join(slices.Compact(ms), ", ")
	}
	return allow
}

// apiPrefixes are the prefixes every API route is served under: /api/v1 and the legacy
// /api/<vendor>/v1, for each of vendorNames.
func apiPrefixes(vendor string) []string {
	prefixes := []string{"/api/v1"}
	for _, v := range vendorNames(vendor) {
		prefixes = append(prefixes, "/api/"+v+"/v1")
	}
	return prefixes
}

// vendorNames are the names the routes named after the vendor are served under: the
// Service's vendor, and openpix as well when the vendor is another. The SDKs and the
// spec build /openpix/... paths whatever the brand (the Node SDK's QR image URL, the
// sandbox's /openpix/testing, /api/openpix/v1), so a server with -vendor woovi answers
// them too; the links it hands out use its own vendor's.
func vendorNames(vendor string) []string {
	if vendor == payments.DefaultVendor {
		return []string{vendor}
	}
	return []string{vendor, payments.DefaultVendor}
}
