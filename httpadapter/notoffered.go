package httpadapter

import (
	"log/slog"
	"net/http"
	"strings"
)

// notOfferedOp is an operation of the official OpenPix/Woovi API documents that this
// version does not offer: its method and path as the documents give them (a `:id`
// parameter written as {id}), and what it does, said from the document's summary.
type notOfferedOp struct {
	method, path string // "GET", "/api/v1/dispute/{id}"
	what         string // "getting a dispute"
}

// notOfferedOps are the operations of the official documents that no route of this
// version serves, each registered by addNotOffered. TestOperationsTable checks that every
// operation of the documents answers (served, or 501) and writes the table of them all,
// docs/openpix-operations.md.
var notOfferedOps = []notOfferedOp{
	// Account registrations and limits.
	{"GET", "/api/v1/account-register", "looking up an account registration by correlationID"},
	{"DELETE", "/api/v1/account-register/{id}", "deleting an account registration"},
	{"GET", "/api/v1/limits/{accountId}", "getting an account's limits"},

	// Receivables anticipation.
	{"GET", "/api/v1/anticipation", "listing anticipation requests"},
	{"POST", "/api/v1/anticipation/balance/batch", "syncing beneficiary balances in bulk"},
	{"POST", "/api/v1/anticipation/beneficiary", "registering an anticipation beneficiary"},
	{"POST", "/api/v1/anticipation/beneficiary/{taxID}/activate", "activating an anticipation beneficiary"},
	{"POST", "/api/v1/anticipation/beneficiary/{taxID}/deactivate", "deactivating an anticipation beneficiary"},
	{"POST", "/api/v1/anticipation/{id}/approve", "approving an anticipation request"},
	{"POST", "/api/v1/anticipation/{id}/reject", "rejecting an anticipation request"},

	// Boletos: this version takes Pix only.
	{"GET", "/api/v1/boleto-transaction", "listing boleto transactions"},
	{"GET", "/api/v1/boleto-transaction/{boletoTransactionID}", "getting a boleto transaction"},
	{"POST", "/api/v1/boleto/validate", "validating a boleto by barcode"},

	// Onboarding.
	{"POST", "/api/v1/kyc/onboarding", "creating a KYC onboarding"},

	// Funds recovery (MED) opened by the company.
	{"POST", "/api/v1/funds-recovery", "opening a funds recovery (MED)"},
	{"GET", "/api/v1/funds-recovery/{id}", "getting a funds recovery (MED)"},
	{"POST", "/api/v1/funds-recovery/{id}/cancel", "canceling a funds recovery (MED)"},

	// Invoices (NFS-e through NFe.io).
	{"GET", "/api/v1/invoice", "listing invoices"},
	{"POST", "/api/v1/invoice", "creating an invoice"},
	{"GET", "/api/v1/invoice/integration", "getting the NFe.io invoice integration"},
	{"PATCH", "/api/v1/invoice/integration", "activating or deactivating the NFe.io invoice integration"},
	{"POST", "/api/v1/invoice/integration", "creating the NFe.io invoice integration"},
	{"PUT", "/api/v1/invoice/integration", "updating the invoice integration's tax fields"},
	{"POST", "/api/v1/invoice/integration/certificate", "uploading the invoice integration's NFe.io certificate"},
	{"POST", "/api/v1/invoice/integration/test", "issuing a NFe.io test invoice"},
	{"POST", "/api/v1/invoice/{correlationID}/cancel", "canceling an invoice"},
	{"GET", "/api/v1/invoice/{correlationID}/pdf", "getting an invoice's PDF"},
	{"GET", "/api/v1/invoice/{correlationID}/xml", "getting an invoice's XML"},

	// Pix key tokens (the DICT look-up allowance), and the PSP directory.
	{"GET", "/api/v1/pix-keys/tokens", "getting Pix key token data"},
	{"GET", "/api/v1/pix-keys/tokens/logs", "getting Pix key token bucket logs"},
	{"GET", "/api/v1/psp", "listing PSPs (payment service providers)"},

	// Receipts.
	{"GET", "/api/v1/receipt/{ReceiptType}/{EndToEndId}", "getting a transaction's PDF receipt"},

	// Stablecoin.
	{"POST", "/api/v1/stablecoin/deposit", "creating a stablecoin deposit"},
	{"POST", "/api/v1/stablecoin/deposit/approve", "approving a stablecoin deposit"},
	{"GET", "/api/v1/stablecoin/payout", "getting a stablecoin payout's status by correlationID"},
	{"POST", "/api/v1/stablecoin/payout", "paying out a stablecoin balance through Pix"},
	{"GET", "/api/v1/stablecoin/payout/quote", "quoting a stablecoin payout"},
	{"GET", "/api/v1/stablecoin/payout/{payoutId}", "getting a stablecoin payout's status"},
	{"GET", "/api/v1/stablecoin/quote", "quoting a stablecoin deposit"},
	{"GET", "/api/v1/stablecoin/subaccount", "listing stablecoin subaccounts"},
	{"POST", "/api/v1/stablecoin/subaccount", "requesting a stablecoin subaccount"},
	{"GET", "/api/v1/stablecoin/subaccount/{subAccountId}", "getting a stablecoin subaccount"},
	{"GET", "/api/v1/stablecoin/subaccount/{subAccountId}/balances", "reading a stablecoin subaccount's balances"},
	{"GET", "/api/v1/stablecoin/subaccount/{subAccountId}/wallets", "listing a stablecoin subaccount's deposit addresses"},
	{"GET", "/api/v1/stablecoin/wallets", "listing stablecoin deposit wallets"},
}

// addNotOffered registers each of notOfferedOps through api (so under /api/v1 and the
// legacy /api/<vendor>/v1), behind auth like every API route, answering 501
// {"error":"<METHOD> <path>: <what> is not offered in this version"}. A client learns
// that the operation exists and is not available here, rather than getting the 404 of a
// route it knows is there; a later version replaces the entry with a real route.
func addNotOffered(api func(pattern string, h http.Handler), auth func(http.Handler) http.Handler, log *slog.Logger) {
	for _, op := range notOfferedOps {
		path, ok := strings.CutPrefix(op.path, "/api/v1")
		if !ok {
			panic("httpadapter: a not-offered operation outside /api/v1: " + op.path)
		}
		api(op.method+" "+path, auth(handleNotImplemented(log, op.message())))
	}
}

// message is the 501 reply's error: the operation, named as the documents name it, and
// what it does.
func (op notOfferedOp) message() string {
	return op.method + " " + op.path + ": " + op.what + " is not offered in this version"
}
