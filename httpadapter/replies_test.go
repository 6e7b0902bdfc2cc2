package httpadapter

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// TestReplies_SameBytesAsMaps checks that every typed reply writes the bytes the
// map[string]any it replaced wrote: the same keys with the same values, in the order of
// their names. Decoding a reply into a map of raw values and encoding that map again must
// give back the reply's bytes exactly.
func TestReplies_SameBytesAsMaps(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	charge := payments.Charge{Status: "ACTIVE", Value: 1990, CorrelationID: "c1", BRCode: "000201", CreatedAt: now, UpdatedAt: now}
	page := payments.PageInfo{Skip: 0, Limit: 20, TotalCount: 1}
	for name, reply := range map[string]any{
		"accountList":          accountListReply{Accounts: []payments.Account{{}}, PageInfo: page},
		"application":          applicationReply{Application: viewApplication(payments.Application{Name: "a", CreatedAt: now})},
		"success":              successReply{Success: true},
		"cashback":             cashbackReply{Message: "ok"},
		"chargeCreated":        chargeCreatedReply{BRCode: charge.BRCode, Charge: charge, CorrelationID: charge.CorrelationID},
		"charge":               chargeReply{Charge: charge},
		"chargeList":           chargeListReply{Charges: []payments.Charge{charge}, PageInfo: page},
		"chargeListNil":        chargeListReply{PageInfo: page},
		"customer":             customerReply{},
		"customerList":         customerListReply{PageInfo: page},
		"preRegistrationNew":   preRegistrationCreatedReply{},
		"preRegistration":      preRegistrationReply{},
		"preRegistrationList":  preRegistrationListReply{PageInfo: partnerPageInfo{PageInfo: page, Errors: []errorMessage{}}},
		"affiliateList":        affiliateListReply{Affiliates: []affiliate{{Account: &payments.PreRegistrationAccount{ClientID: "c"}}}, PageInfo: partnerPageInfo{PageInfo: page, Errors: []errorMessage{}}},
		"pixQRCodeCreated":     pixQRCodeCreatedReply{BRCode: "000201", CorrelationID: "q1"},
		"pixQRCode":            pixQRCodeReply{},
		"pixQRCodeList":        pixQRCodeListReply{PageInfo: page},
		"refund":               refundReply{},
		"pixTransactionRefund": pixTransactionRefundReply{},
		"refundList":           refundListReply{PageInfo: page},
		"subaccount":           subaccountReply{},
		"subaccountList":       subaccountListReply{PageInfo: page},
		"webhook":              webhookReply{},
		"webhookList":          webhookListReply{PageInfo: page},
		"webhookPublicKeys":    webhookPublicKeysReply{},
		"sandboxCharge":        sandboxChargePaidReply{Charge: wireCharge{charge: charge}},
		"sandboxPixQRCode":     sandboxPixQRCodePaidReply{},
		"deleted":              deletedReply{ID: "c1", Status: "OK"},
		"accountClosed":        accountClosedReply{AccountID: "a1", Status: "OK"},
		"subaccountDeleted":    subaccountDeletedReply{PixKey: "k@example.com", Status: "OK"},
		"company":              companyReply{Company: companyView{CorrelationID: "c", OfficialName: "o", TaxID: "t", TradeName: "n"}},
		"webhookIPs":           webhookIPsReply{IPs: []string{"203.0.113.7"}},
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			b, err := json.Marshal(reply)
			is.NoErr(err)
			var m map[string]json.RawMessage
			is.NoErr(json.Unmarshal(b, &m))
			again, err := json.Marshal(m)
			is.NoErr(err)
			is.Equal(string(b), string(again)) // the keys in the order a map writes them
		})
	}
}
