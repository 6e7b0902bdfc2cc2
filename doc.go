// Package payments is a Pix payment platform as an embeddable library: charges with BR
// Codes and QR images, customers, refunds, static QR codes, transactions, accounts and
// subaccounts with balances, and the rest of the OpenPix/Woovi API, on an embedded bbolt
// file (or any store.Store) with no server to run.
//
// A Service acts for one company. Open and New return the Service of the default company;
// Company returns another company's. Every method is one store transaction: it either
// happens whole, or not at all, except where its doc says otherwise: money going out
// (refunds, payments, withdrawals) is held in one transaction, sent to the bank (the Rail)
// after it commits, and settled in another (see orders.go). Money is int64 centavos
// everywhere.
//
// Errors are *Error values with a Code (EINVALID, ENOTFOUND, ECONFLICT, ...) and, for bad
// input, the offending Field; branch on ErrorCode, never on messages.
//
// Time comes from Options.Clock; tests pass a *ManualClock and move it instead of sleeping.
//
// A long-lived process runs one loop beside its calls, Run, which delivers webhooks as
// their events commit, does the work the clock makes due (RunDue: expiries, subscriptions'
// charges, orders to send again) and reconciles with the bank, until its context ends:
//
//	svc, err := payments.Open("payments.db", payments.Options{WebhookSender: sender})
//	...
//	go svc.Run(ctx) // cancel ctx and let it return before svc.Close
//
// A test on the in-memory store calls RunDue (or AdvanceClock) itself instead.
package payments
