package payments_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
)

func createCharge(t *testing.T, e env, p payments.CreateChargeParams) payments.Charge {
	t.Helper()
	c, err := e.svc.CreateCharge(ctx, p)
	if err != nil {
		t.Fatalf("create charge: %v", err)
	}
	return c
}

func TestService_CreateCharge(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		t.Run("OK", func(t *testing.T) {
			is := is.New(t)
			c := createCharge(t, e, payments.CreateChargeParams{
				CorrelationID: "order-1", Value: 1050, Comment: "Pedido 1",
				Customer:       &payments.CreateCustomerParams{Name: "Dan", TaxID: "52998224725", Email: "dan@example.com"},
				AdditionalInfo: []payments.AdditionalInfo{{Key: "Produto", Value: "Camisa"}},
			})
			is.Equal(c.Status, payments.ChargeActive)
			is.Equal(c.Type, payments.ChargeDynamic) // default type
			is.Equal(c.Value, int64(1050))
			is.Equal(c.ExpiresIn, int64(86400))           // default expiry
			is.Equal(c.ExpiresDate, t0.Add(24*time.Hour)) // from the injected clock
			is.Equal(c.Fee, int64(50))                    // 0.8% of 10,50 is below the R$ 0,50 minimum
			is.Equal(len(c.TransactionID), 32)            // 32 hex like the real API
			is.Equal(c.Identifier, c.TransactionID)       // identifier is the transaction id
			is.Equal(c.QRCodeImage+c.PaymentLinkURL, "")  // no Links installed (SetLinks): no URLs
			is.Equal(len(c.PaymentLinkID), 36)            // the link is its UUID
			is.Equal(c.PaymentMethods.Pix.TxID, c.Identifier[:25])
			is.Equal(c.PaymentMethods.Pix.Method, "PIX_COB")
			is.Equal(c.Customer.Name, "Dan")
			is.Equal(c.Customer.TaxID.TaxID, "52998224725")
			is.Equal(c.AmountDue, int64(1050))

			code, err := brcode.Parse(c.BRCode)
			is.NoErr(err)                              // a valid BR Code
			is.Equal(code.Amount, int64(1050))         // carrying the value
			is.Equal(code.TxID, c.Identifier[:25])     // and the txid
			is.Equal(code.Key, "pix@loja.example.com") // against the company key
			is.Equal(code.Name, "Loja Exemplo")
			is.Equal(code.City, "Sao Paulo") // folded to ASCII
			is.Equal(code.Info, "Pedido 1")  // the comment

			gid, err := json.Marshal(c.GlobalID)
			is.NoErr(err)
			is.True(len(gid) > 10)
			for _, id := range []string{"order-1", c.TransactionID, c.PaymentLinkID, c.GlobalID, c.Identifier[:25]} {
				got, err := e.svc.GetCharge(ctx, id)
				is.NoErr(err) // found by every id
				is.Equal(got.CorrelationID, "order-1")
			}
			cust, err := e.svc.GetCustomer(ctx, "52998224725")
			is.NoErr(err) // the customer was created

			// A second charge links the same customer by tax ID instead of creating one.
			c2 := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "order-2", Value: 100,
				Customer: &payments.CreateCustomerParams{Name: "Daniel S.", TaxID: "529.982.247-25"}})
			is.Equal(c2.Customer.CorrelationID, cust.CorrelationID) // linked
			is.Equal(c2.Customer.Name, "Daniel S.")                 // as sent for this charge
			stored, err := e.svc.GetCustomer(ctx, cust.CorrelationID)
			is.NoErr(err)
			is.Equal(stored.Name, "Dan") // the stored customer is not rewritten
			_, page, err := e.svc.ListCustomers(ctx, payments.ListParams{})
			is.NoErr(err)
			is.Equal(page.TotalCount, 1) // no second customer

			evs, err := e.svc.Events(ctx, 0, 10)
			is.NoErr(err)
			is.Equal(len(evs), 2)                           // one CHARGE_CREATED per charge
			is.Equal(evs[0].Name, "OPENPIX:CHARGE_CREATED") // with the vendor prefix
			is.True(strings.Contains(string(evs[0].Data), "order-1"))
		})
		t.Run("CustomerTaxIDConflict", func(t *testing.T) {
			// A customer named by correlationID with a tax ID that is not theirs: refused,
			// changing nothing, rather than a charge listed as one customer's carrying
			// another's tax ID.
			is := is.New(t)
			for _, c := range []payments.CreateCustomerParams{
				{Name: "Ana", TaxID: "12345678909", CorrelationID: "cu1"},
				{Name: "Bob", TaxID: "11144477735", CorrelationID: "cu2"},
				{Name: "Cid", Email: "cid@example.com", CorrelationID: "cu3"}, // no tax ID
			} {
				_, err := e.svc.CreateCustomer(ctx, c)
				is.NoErr(err)
			}
			_, before, err := e.svc.ListCharges(ctx, payments.ChargeFilter{})
			is.NoErr(err)
			for _, tc := range []struct{ corr, taxID string }{
				{"cu1", "11144477735"}, // Bob's
				{"cu1", "39053344705"}, // nobody's, but Ana has another
				{"cu3", "11144477735"}, // Cid has none, and this one is Bob's
			} {
				_, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "conflict-" + tc.corr + tc.taxID, Value: 100,
					Customer: &payments.CreateCustomerParams{Name: "X", TaxID: tc.taxID, CorrelationID: tc.corr}})
				is.Equal(payments.ErrorCode(err), payments.ECONFLICT)
				is.Equal(payments.ErrorField(err), "customer.taxID")
			}
			_, after, err := e.svc.ListCharges(ctx, payments.ChargeFilter{})
			is.NoErr(err)
			is.Equal(after.TotalCount, before.TotalCount) // nothing created
			for _, tc := range []struct{ corr, taxID string }{
				{"cu1", "123.456.789-09"}, // Ana's own, formatted
				{"cu3", "39053344705"},    // Cid has none, and nobody has this one
			} {
				c, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "fine-" + tc.corr + tc.taxID, Value: 100,
					Customer: &payments.CreateCustomerParams{Name: "X", TaxID: tc.taxID, CorrelationID: tc.corr}})
				is.NoErr(err)
				is.Equal(c.Customer.CorrelationID, tc.corr) // linked
			}
		})
		t.Run("ReturnExisting", func(t *testing.T) {
			is := is.New(t)
			first := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "idem", Value: 500})
			again, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "idem", Value: 999, ReturnExisting: true})
			is.NoErr(err)
			is.Equal(again.TransactionID, first.TransactionID) // the existing charge comes back
			is.Equal(again.Value, int64(500))
			_, err = e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "idem", Value: 500})
			is.Equal(payments.ErrorCode(err), payments.ECONFLICT) // without return_existing it is a conflict
			is.Equal(payments.ErrorField(err), "correlationID")
		})
		t.Run("ExpiresDate", func(t *testing.T) {
			is := is.New(t)
			c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "exp-date", Value: 500, ExpiresDate: time.Date(2026, 11, 23, 9, 0, 0, 0, time.FixedZone("BRT", -3*3600))})
			is.Equal(c.ExpiresDate, time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)) // offset honoured, stored in UTC
			is.Equal(c.ExpiresIn, int64(86400))
			c = createCharge(t, e, payments.CreateChargeParams{CorrelationID: "exp-day", Value: 500, ExpiresDate: time.Date(2026, 11, 30, 23, 59, 59, 999_999_999, time.UTC)})
			is.Equal(c.ExpiresDate, time.Date(2026, 11, 30, 23, 59, 59, 999_000_000, time.UTC)) // kept to the millisecond
		})
		t.Run("ExpiresDateLenient", func(t *testing.T) {
			for _, tc := range []struct {
				name string
				date time.Time
				in   int64
				want time.Time
			}{
				{"BothDateWins", t0.Add(24 * time.Hour), 3600, t0.Add(24 * time.Hour)},
				{"BothDateWinsOverBadIn", t0.Add(24 * time.Hour), 5, t0.Add(24 * time.Hour)},
				{"TenYears", time.Date(2036, 11, 19, 12, 0, 0, 0, time.UTC), 0, t0.Add(payments.MaxChargeExpiresIn * time.Second)},
				{"OffsetToUTC", time.Date(2026, 11, 23, 9, 0, 0, 250_000_000, time.FixedZone("", 2*3600)), 0, time.Date(2026, 11, 23, 7, 0, 0, 250_000_000, time.UTC)},
			} {
				t.Run(tc.name, func(t *testing.T) {
					is := is.New(t)
					c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "lenient-" + tc.name, Value: 500, ExpiresDate: tc.date, ExpiresIn: tc.in})
					is.Equal(c.ExpiresDate, tc.want)                                                 // read as the real API reads it
					is.Equal(c.ExpiresIn, int64(tc.want.Sub(t0)/time.Second))                        // and expiresIn is the true distance
					is.True(c.ExpiresIn != 9223372036 && c.ExpiresIn <= payments.MaxChargeExpiresIn) // not a saturated Duration
				})
			}
		})
		t.Run("Comment140", func(t *testing.T) {
			for i, comment := range []string{
				strings.Repeat("a", 140),
				strings.Repeat("ç", 140), // two bytes each in UTF-8, one letter once folded
				strings.Repeat("ß", 140), // folds to two letters each
				string([]rune(strings.Repeat("Pagamento – pedido nº 77 ", 6))[:140]),
				strings.Repeat("€", 140), // nothing of it folds to ASCII
			} {
				is := is.New(t)
				is.Equal(len([]rune(comment)), 140) // the limit, exactly
				c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "comment-" + strconv.Itoa(i), Value: 500, Comment: comment})
				is.Equal(c.Comment, comment) // the charge keeps all of it
				got, err := e.svc.GetCharge(ctx, c.CorrelationID)
				is.NoErr(err)
				is.Equal(got.Comment, comment) // stored whole
				code, err := brcode.Parse(c.BRCode)
				is.NoErr(err)                                      // the code stays valid
				is.True(len(code.Info) <= 99-18-4-len(code.Key)-4) // carrying what fits next to the key
				folded := strings.NewReplacer("ç", "c", "ß", "ss", "–", "-", "º", "o", "€", "").Replace(comment)
				is.True(strings.HasPrefix(folded, code.Info))                                             // a prefix of the comment, folded to ASCII
				is.True(len(code.Info) >= min(len(strings.TrimSpace(folded)), 99-18-4-len(code.Key)-4)-1) // as long as fits
			}
		})
	})
}

func TestService_CreateCharge_Invalid(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		p     payments.CreateChargeParams
		field string
	}{
		{"NoCorrelationID", payments.CreateChargeParams{Value: 100}, "correlationID"},
		{"ZeroValue", payments.CreateChargeParams{CorrelationID: "x", Value: 0}, "value"},
		{"NegativeValue", payments.CreateChargeParams{CorrelationID: "x", Value: -5}, "value"},
		{"HugeValue", payments.CreateChargeParams{CorrelationID: "x", Value: 1_000_000_000_000}, "value"},
		{"ExpiresInShort", payments.CreateChargeParams{CorrelationID: "x", Value: 100, ExpiresIn: 299}, "expiresIn"},
		{"ExpiresDatePast", payments.CreateChargeParams{CorrelationID: "x", Value: 100, ExpiresDate: time.Date(2026, 11, 22, 12, 4, 0, 0, time.UTC)}, "expiresDate"},
		{"ExpiresInTooFar", payments.CreateChargeParams{CorrelationID: "x", Value: 100, ExpiresIn: payments.MaxChargeExpiresIn + 1}, "expiresIn"},
		{"ExpiresDateTooFar", payments.CreateChargeParams{CorrelationID: "x", Value: 100, ExpiresDate: time.Date(2036, 11, 19, 12, 0, 1, 0, time.UTC)}, "expiresDate"},
		{"ExpiresDateFarFuture", payments.CreateChargeParams{CorrelationID: "x", Value: 100, ExpiresDate: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)}, "expiresDate"},
		{"ExpiresBothDateBad", payments.CreateChargeParams{CorrelationID: "x", Value: 100, ExpiresIn: 1000, ExpiresDate: time.Date(2026, 11, 22, 12, 4, 0, 0, time.UTC)}, "expiresDate"},
		{"CommentTooLong", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Comment: strings.Repeat("a", 141)}, "comment"},
		{"CommentTooLongMultiByte", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Comment: strings.Repeat("ç", 141)}, "comment"},
		{"CommentInvalidUTF8", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Comment: "caf\xe9"}, "comment"},
		{"CommentC1Control", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Comment: "Total \u0085 R$ 1,00"}, "comment"},
		{"CommentBidiOverride", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Comment: "Total \u202e00,001 $R\u202c"}, "comment"},
		{"CommentBidiIsolate", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Comment: "Total \u2067R$ 1,00\u2069"}, "comment"},
		{"CorrelationIDBidi", payments.CreateChargeParams{CorrelationID: "a\u202eb", Value: 100}, "correlationID"},
		{"UnknownType", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Type: "BOLETO"}, "type"},
		{"DueDaysOnDynamic", payments.CreateChargeParams{CorrelationID: "x", Value: 100, DaysForDueDate: 3}, "daysForDueDate"},
		{"FinesOnDynamic", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Fines: &payments.Fines{Value: 200}}, "fines"},
		{"InterestsOnDynamic", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Interests: &payments.Interests{Value: 10}}, "interests"},
		{"DiscountOnDynamic", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Discount: &payments.DiscountSettings{}}, "discount"},
		{"OverdueWithoutDueDays", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Type: payments.ChargeOverdue}, "daysForDueDate"},
		{"OverdueWithExpiresIn", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Type: payments.ChargeOverdue, DaysForDueDate: 2, ExpiresIn: 1000}, "expiresIn"},
		{"OverdueBusinessDayDiscount", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Type: payments.ChargeOverdue, DaysForDueDate: 2,
			Discount: &payments.DiscountSettings{Modality: "VALUE_PER_BUSINESS_DAY_ADVANCE", Value: 1}}, "discount.modality"},
		{"OverdueFineType", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Type: payments.ChargeOverdue, DaysForDueDate: 2, Fines: &payments.Fines{Value: 1, Type: "DAILY"}}, "fines.type"},
		{"OverdueInterestType", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Type: payments.ChargeOverdue, DaysForDueDate: 2, Interests: &payments.Interests{Value: 1, Type: "MONTHLY"}}, "interests.type"},
		{"OverdueFixedInterestOverValue", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Type: payments.ChargeOverdue, DaysForDueDate: 2, Interests: &payments.Interests{Value: 101, Type: payments.InterestFixed}}, "interests.value"},
		{"CustomerNoName", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Customer: &payments.CreateCustomerParams{TaxID: "52998224725"}}, "customer.name"},
		{"CustomerNoContact", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Customer: &payments.CreateCustomerParams{Name: "A"}}, "customer.taxID"},
		{"CustomerBadTaxID", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Customer: &payments.CreateCustomerParams{Name: "A", TaxID: "11111111111"}}, "customer.taxID"},
		{"SubaccountKey", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Subaccount: "not a key"}, "subaccount"},
		{"SplitKey", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Splits: []payments.Split{{Value: 10, PixKey: "nope"}}}, "splits[0].pixKey"},
		{"SplitsOverValue", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Splits: []payments.Split{{Value: 60, PixKey: "a@b.com"}, {Value: 60, PixKey: "c@d.com"}}}, "splits"},
		{"AdditionalInfoKey", payments.CreateChargeParams{CorrelationID: "x", Value: 100, AdditionalInfo: []payments.AdditionalInfo{{Value: "v"}}}, "additionalInfo[0].key"},
		{"SplitsSumOverflows", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Splits: []payments.Split{{Value: math.MaxInt64, PixKey: "a@b.com"}, {Value: 2, PixKey: "c@d.com"}}}, "splits[0].value"},
		{"SplitValueOverMax", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Splits: []payments.Split{{Value: 1, PixKey: "a@b.com"}, {Value: payments.MaxChargeValue + 1, PixKey: "c@d.com"}}}, "splits[1].value"},
		{"SplitValueZero", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Splits: []payments.Split{{Value: 1, PixKey: "a@b.com"}, {PixKey: "c@d.com"}}}, "splits[1].value"},
		{"SplitKeyEmpty", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Splits: []payments.Split{{Value: 1, PixKey: "a@b.com"}, {Value: 1}}}, "splits[1].pixKey"},
		{"TooManySplits", payments.CreateChargeParams{CorrelationID: "x", Value: 1_000_000, Splits: manySplits(payments.MaxSplits + 1)}, "splits"},
		{"SubaccountAndSplits", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Subaccount: "a@b.com", Splits: []payments.Split{{Value: 10, PixKey: "a@b.com"}}}, "splits"},
		{"SubaccountMissing", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Subaccount: "nobody@example.com"}, "subaccount"},
		{"SplitSubaccountMissing", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Splits: []payments.Split{{Value: 10, PixKey: "nobody@example.com"}}}, "splits[0].pixKey"},
		{"DiscountPerDayOverValue", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Type: payments.ChargeOverdue, DaysForDueDate: 2,
			Discount: &payments.DiscountSettings{Modality: payments.DiscountValuePerDay, Value: math.MaxInt64}}, "discount.value"},
		{"DiscountPercentPerDayOver100", payments.CreateChargeParams{CorrelationID: "x", Value: 100, Type: payments.ChargeOverdue, DaysForDueDate: 2,
			Discount: &payments.DiscountSettings{Modality: payments.DiscountPercentagePerDay, Value: 10000}}, "discount.value"},
	}
	eachStore(t, func(t *testing.T, e env) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				_, err := e.svc.CreateCharge(ctx, tc.p)
				is.Equal(payments.ErrorCode(err), payments.EINVALID) // invalid
				is.Equal(payments.ErrorField(err), tc.field)         // naming the field
				_, page, err := e.svc.ListCharges(ctx, payments.ChargeFilter{})
				is.NoErr(err)
				is.Equal(page.TotalCount, 0) // no charge written
				_, page, err = e.svc.ListCustomers(ctx, payments.ListParams{})
				is.NoErr(err)
				is.Equal(page.TotalCount, 0) // no customer written either
				evs, err := e.svc.Events(ctx, 0, 10)
				is.NoErr(err)
				is.Equal(len(evs), 0) // no event
			})
		}
	})
}

// manySplits returns n splits of 1 centavo, to n different keys.
func manySplits(n int) []payments.Split {
	out := make([]payments.Split, n)
	for i := range out {
		out[i] = payments.Split{Value: 1, PixKey: fmt.Sprintf("s%d@example.com", i)}
	}
	return out
}

// TestService_CreateCharge_Subaccounts: a charge's subaccount and splits must name existing
// subaccounts when it is created, and the error names the split.
func TestService_CreateCharge_Subaccounts(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		for _, key := range []string{"loja1@example.com", "loja2@example.com"} {
			_, _, err := e.svc.CreateSubaccount(ctx, payments.CreateSubaccountParams{PixKey: key, Name: key})
			is.NoErr(err)
		}
		_, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "x", Value: 100, Splits: []payments.Split{
			{Value: 10, PixKey: "loja1@example.com"}, {Value: 10, PixKey: "gone@example.com"}}})
		is.Equal(payments.ErrorCode(err), payments.EINVALID)                                                                       // refused at creation, not changed at payment
		is.Equal(payments.ErrorField(err), "splits[1].pixKey")                                                                     // naming the split
		is.Equal(payments.ErrorMessage(err), "splits[1].pixKey names no subaccount: create the subaccount gone@example.com first") // and saying how to fix it
		_, err = e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "x", Value: 100, Subaccount: "loja1@example.com",
			Splits: []payments.Split{{Value: 10, PixKey: "loja2@example.com"}}})
		is.Equal(payments.ErrorMessage(err), "give subaccount (it receives the whole charge) or splits, not both")

		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "ok", Value: 1_000_000, Splits: []payments.Split{
			{Value: 10, PixKey: "LOJA1@example.com"}, {Value: 20, PixKey: "loja2@example.com"}}})
		is.Equal(c.Splits[0].PixKey, "loja1@example.com") // any form of an existing key
		c = createCharge(t, e, payments.CreateChargeParams{CorrelationID: "sub", Value: 100, Subaccount: "loja2@example.com"})
		is.Equal(c.Subaccount, "loja2@example.com")
		splits := manySplits(payments.MaxSplits)
		for i := range splits {
			splits[i].PixKey = "loja1@example.com"
		}
		c = createCharge(t, e, payments.CreateChargeParams{CorrelationID: "max", Value: 1_000_000, Splits: splits})
		is.Equal(len(c.Splits), payments.MaxSplits) // up to the cap
	})
}

// TestService_ChargeOverdueLarge: an OVERDUE charge is taken only when its amount due on
// its last late day (value, fine, every day of interest) is one a Pix can carry, so it
// can be paid until it expires; the largest such charge is paid on that day. The largest
// discount leaves one centavo.
func TestService_ChargeOverdueLarge(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		const v = payments.MaxChargeValue
		day := 24 * time.Hour
		full := &payments.Fines{Value: 10000}      // 100% once
		daily := &payments.Interests{Value: 10000} // 100% a day
		overdue := func(corr string, value int64, fines *payments.Fines, interests *payments.Interests, after int) error {
			_, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: corr, Value: value, Type: payments.ChargeOverdue,
				DaysForDueDate: 1, DaysAfterDueDate: after, Fines: fines, Interests: interests})
			return err
		}
		err := overdue("fined", v, full, nil, 1) // 2v on the first late day
		is.Equal(payments.ErrorCode(err), payments.EINVALID)
		is.Equal(payments.ErrorField(err), "fines.value")
		is.True(strings.HasPrefix(payments.ErrorMessage(err), "fines.value: ")) // the message names it too
		err = overdue("accrued", v/10, nil, daily, 10)                          // 11 v/10 by the tenth late day
		is.Equal(payments.ErrorField(err), "interests.value")
		is.True(strings.HasPrefix(payments.ErrorMessage(err), "interests.value: "))
		err = overdue("whole", v, full, daily, payments.MaxOverdueDays)
		is.Equal(payments.ErrorField(err), "fines.value")
		_, page, err := e.svc.ListCharges(ctx, payments.ChargeFilter{})
		is.NoErr(err)
		is.Equal(page.TotalCount, 0) // nothing was written

		is.NoErr(overdue("late", v/4, full, daily, 2)) // v/4 + v/4 + 2 days of v/4: within v
		createCharge(t, e, payments.CreateChargeParams{
			CorrelationID: "early", Value: v, Type: payments.ChargeOverdue, DaysForDueDate: payments.MaxOverdueDays,
			Discount: &payments.DiscountSettings{Modality: payments.DiscountPercentagePerDay, Value: 9999},
		})
		e.clock.Set(t0.Add(3*day + 23*time.Hour)) // the last late day of "late"; "early" 3647 days early
		got, err := e.svc.GetCharge(ctx, "early")
		is.NoErr(err)
		is.Equal(got.Discount, int64(v-1)) // the discount, capped, leaves one centavo
		is.Equal(got.AmountDue, int64(1))
		got, err = e.svc.GetCharge(ctx, "late")
		is.NoErr(err)
		is.Equal(got.AmountDue, int64(4*(v/4))) // value, fine, 2 days of interest
		pay(t, e, got)                          // still payable
		got, err = e.svc.GetCharge(ctx, "late")
		is.NoErr(err)
		is.Equal(got.Status, payments.ChargeCompleted)
	})
}

// TestService_ListCharges_CorrelationIDLikeAFilter: a customer whose correlationID reads
// like another's status filter ("a|status:ACTIVE") does not have its charges listed as
// customer "a"'s ACTIVE ones (they were, on every store, when the status was joined by "|").
func TestService_ListCharges_CorrelationIDLikeAFilter(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		odd := &payments.CreateCustomerParams{Name: "Odd", Email: "odd@example.com", CorrelationID: "a|status:ACTIVE"}
		createCharge(t, e, payments.CreateChargeParams{CorrelationID: "c1", Value: 100, Customer: odd})
		_, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{Name: "A", Email: "a@example.com", CorrelationID: "a"})
		is.NoErr(err)
		cs, page, err := e.svc.ListCharges(ctx, payments.ChargeFilter{Customer: "a", Status: payments.ChargeActive})
		is.NoErr(err)
		is.Equal(len(cs), 0) // customer a has none
		is.Equal(page.TotalCount, 0)
		cs, _, err = e.svc.ListCharges(ctx, payments.ChargeFilter{Customer: "a|status:ACTIVE", Status: payments.ChargeActive})
		is.NoErr(err)
		is.Equal(len(cs), 1) // the odd customer's own
		cs, _, err = e.svc.ListCharges(ctx, payments.ChargeFilter{Customer: "a|status:ACTIVE", Status: payments.ChargeCompleted})
		is.NoErr(err)
		is.Equal(len(cs), 0) // and only with its status
	})
}

// TestService_GetCharge_Order checks GetCharge's order of kinds of id: a correlationID
// before a globalID (a charge whose correlationID is another's globalID is the one found),
// a globalID before the others, and an id of a globalID's form that names no charge is
// looked up as the others still, then not found.
func TestService_GetCharge_Order(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		a := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "a", Value: 100})
		b := createCharge(t, e, payments.CreateChargeParams{CorrelationID: a.GlobalID, Value: 200})
		got, err := e.svc.GetCharge(ctx, a.GlobalID)
		is.NoErr(err)
		is.Equal(got.Value, int64(200)) // b, by its correlationID
		got, err = e.svc.GetCharge(ctx, b.GlobalID)
		is.NoErr(err)
		is.Equal(got.CorrelationID, a.GlobalID) // b, by its globalID

		for _, id := range []string{
			base64.StdEncoding.EncodeToString([]byte("Charge:no-such-record")),
			base64.StdEncoding.EncodeToString([]byte("Charge:")),
		} {
			_, err := e.svc.GetCharge(ctx, id)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // no such charge: not found, not another error
		}
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "c", Value: 300})
		got, err = e.svc.GetCharge(ctx, c.PaymentLinkID)
		is.NoErr(err)
		is.Equal(got.CorrelationID, "c") // the kinds after a globalID are still tried
	})
}

func TestService_ListCharges(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		ana := &payments.CreateCustomerParams{Name: "Ana", Email: "ana@example.com", CorrelationID: "ana"}
		createCharge(t, e, payments.CreateChargeParams{CorrelationID: "c1", Value: 100, Customer: ana, ExpiresIn: 3600})
		e.clock.Advance(time.Minute)
		createCharge(t, e, payments.CreateChargeParams{CorrelationID: "c2", Value: 200})
		e.clock.Advance(time.Minute)
		createCharge(t, e, payments.CreateChargeParams{CorrelationID: "c3", Value: 300, Customer: ana})
		e.clock.Advance(time.Minute)

		ids := func(cs []payments.Charge) []string {
			out := []string{}
			for _, c := range cs {
				out = append(out, c.CorrelationID)
			}
			return out
		}
		cs, page, err := e.svc.ListCharges(ctx, payments.ChargeFilter{})
		is.NoErr(err)
		is.Equal(ids(cs), []string{"c3", "c2", "c1"}) // newest first
		is.Equal(page.TotalCount, 3)
		cs, _, err = e.svc.ListCharges(ctx, payments.ChargeFilter{Customer: "ana"})
		is.NoErr(err)
		is.Equal(ids(cs), []string{"c3", "c1"}) // by customer correlationID
		cs, page, err = e.svc.ListCharges(ctx, payments.ChargeFilter{Start: t0.Add(time.Minute), End: t0.Add(2 * time.Minute)})
		is.NoErr(err)
		is.Equal(ids(cs), []string{"c3", "c2"}) // start and end inclusive
		is.Equal(page.TotalCount, 2)
		cs, page, err = e.svc.ListCharges(ctx, payments.ChargeFilter{ListParams: payments.ListParams{Skip: 1, Limit: 1}})
		is.NoErr(err)
		is.Equal(ids(cs), []string{"c2"}) // paging
		is.Equal(page, payments.PageInfo{Skip: 1, Limit: 1, TotalCount: 3, HasPreviousPage: true, HasNextPage: true})

		e.clock.Advance(time.Hour) // c1 (1 hour) expires; c2, c3 (1 day) stay
		cs, _, err = e.svc.ListCharges(ctx, payments.ChargeFilter{Status: payments.ChargeActive})
		is.NoErr(err)
		is.Equal(ids(cs), []string{"c3", "c2"}) // status filter sees the expiry
		cs, _, err = e.svc.ListCharges(ctx, payments.ChargeFilter{Status: payments.ChargeExpired})
		is.NoErr(err)
		is.Equal(ids(cs), []string{"c1"})
		cs, _, err = e.svc.ListCharges(ctx, payments.ChargeFilter{Customer: "ana", Status: payments.ChargeActive})
		is.NoErr(err)
		is.Equal(ids(cs), []string{"c3"}) // customer and status together

		_, _, err = e.svc.ListCharges(ctx, payments.ChargeFilter{Status: "PAID"})
		is.Equal(payments.ErrorField(err), "status") // unknown status
	})
}

func TestService_DeleteCharge(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "del", Value: 100})
		is.NoErr(e.svc.DeleteCharge(ctx, c.GlobalID))
		_, err := e.svc.GetCharge(ctx, "del")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // gone
		err = e.svc.DeleteCharge(ctx, "del")
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)                             // twice is not found
		createCharge(t, e, payments.CreateChargeParams{CorrelationID: "del", Value: 100}) // its correlationID is free again
	})
}

func TestService_ChargeExpiry(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "exp", Value: 100, ExpiresIn: 900})
		e.clock.Advance(899 * time.Second)
		got, err := e.svc.GetCharge(ctx, "exp")
		is.NoErr(err)
		is.Equal(got.Status, payments.ChargeActive) // one second before expiry
		e.clock.Advance(time.Second)
		got, err = e.svc.GetCharge(ctx, "exp")
		is.NoErr(err)
		is.Equal(got.Status, payments.ChargeExpired) // a read after expiry shows EXPIRED

		n, err := e.svc.ExpireCharges(ctx)
		is.NoErr(err)
		is.Equal(n, 1) // the pass records it
		n, err = e.svc.ExpireCharges(ctx)
		is.NoErr(err)
		is.Equal(n, 0) // once
		evs, err := e.svc.Events(ctx, 0, 10)
		is.NoErr(err)
		is.Equal(len(evs), 2) // created, expired
		is.Equal(evs[1].Name, "OPENPIX:CHARGE_EXPIRED")
		is.Equal(c.ExpiresDate, t0.Add(900*time.Second))
	})
}

func TestService_ChargeOverdueAmounts(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		c := createCharge(t, e, payments.CreateChargeParams{
			CorrelationID: "boleto", Value: 10000, Type: payments.ChargeOverdue,
			DaysForDueDate: 5, DaysAfterDueDate: 10,
			Fines:     &payments.Fines{Value: 200},    // 2% once
			Interests: &payments.Interests{Value: 33}, // 0.33% a day
			Discount: &payments.DiscountSettings{Modality: payments.DiscountFixedUntilDate,
				DiscountFixedDate: []payments.DiscountTier{{DaysActive: 3, Value: 500}, {DaysActive: 5, Value: 1000}}},
		})
		is.Equal(*c.DueDate, t0.Add(5*24*time.Hour))
		is.Equal(c.ExpiresDate, t0.Add(16*24*time.Hour)) // due day + 10 days
		code, err := brcode.Parse(c.BRCode)
		is.NoErr(err)
		is.Equal(code.Amount, int64(0)) // no fixed amount in an OVERDUE code

		day := 24 * time.Hour
		for _, tc := range []struct {
			at                  time.Duration
			discount, amountDue int64
		}{
			{0, 1000, 9000},                                 // 5 days early: the 5-day tier
			{2*day + time.Hour, 500, 9500},                  // 3 days early: the 3-day tier
			{3 * day, 0, 10000},                             // 2 days early: no tier applies
			{5 * day, 0, 10000},                             // the due day
			{6 * day, 0, 10000 + 200 + 33},                  // 1 day late: fine + 1 day of interest
			{10 * day, 0, 10000 + 200 + 5*33},               // 5 days late
			{15*day + 23*time.Hour, 0, 10000 + 200 + 10*33}, // last payable day
		} {
			e.clock.Set(t0.Add(tc.at))
			got, err := e.svc.GetCharge(ctx, "boleto")
			is.NoErr(err)
			is.Equal(got.Discount, tc.discount)   // discount at this time
			is.Equal(got.AmountDue, tc.amountDue) // amount due at this time
			is.Equal(got.Status, payments.ChargeActive)
		}
		e.clock.Set(t0.Add(16 * day))
		got, err := e.svc.GetCharge(ctx, "boleto")
		is.NoErr(err)
		is.Equal(got.Status, payments.ChargeExpired)                                               // past daysAfterDueDate
		is.Equal(*got.Interests, payments.Interests{Value: 33, Type: payments.InterestPercentage}) // the default type, said
		is.Equal(got.AmountDue, int64(10000+200+10*33))                                            // what it last asked for: no interest after expiry
		e.clock.Set(t0.Add(400 * day))
		got, err = e.svc.GetCharge(ctx, "boleto")
		is.NoErr(err)
		is.Equal(got.AmountDue, int64(10000+200+10*33)) // a year on, the same
		is.NoErr(e.svc.RunDue(ctx))                     // records the expiry, a year late
		expired := 0
		evs, err := e.svc.Events(ctx, 0, payments.MaxLimit)
		is.NoErr(err)
		for _, ev := range evs {
			if ev.Name == e.svc.EventName(payments.EventChargeExpired) {
				var v struct{ Charge payments.Charge }
				is.NoErr(json.Unmarshal(ev.Data, &v))
				is.Equal(v.Charge.AmountDue, int64(10000+200+10*33)) // the CHARGE_EXPIRED payload too
				expired++
			}
		}
		is.Equal(expired, 1)

		// FIXED interests are centavos a late day.
		e.clock.Set(t0)
		createCharge(t, e, payments.CreateChargeParams{CorrelationID: "fixed", Value: 10000, Type: payments.ChargeOverdue,
			DaysForDueDate: 1, DaysAfterDueDate: 5, Interests: &payments.Interests{Value: 100, Type: payments.InterestFixed}})
		e.clock.Set(t0.Add(4 * day)) // 3 days late
		got, err = e.svc.GetCharge(ctx, "fixed")
		is.NoErr(err)
		is.Equal(got.AmountDue, int64(10000+3*100))
	})
}

func TestService_ChargesCompanyIsolation(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		c := createCharge(t, e, payments.CreateChargeParams{CorrelationID: "mine", Value: 100})
		co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: "Other"})
		is.NoErr(err)
		other, err := e.svc.Company(ctx, co.ID)
		is.NoErr(err)
		for _, id := range []string{"mine", c.GlobalID, c.TransactionID, c.PaymentLinkID} {
			_, err = other.GetCharge(ctx, id)
			is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // not by any id
		}
		cs, _, err := other.ListCharges(ctx, payments.ChargeFilter{})
		is.NoErr(err)
		is.Equal(len(cs), 0) // not listed
		is.Equal(payments.ErrorCode(other.DeleteCharge(ctx, "mine")), payments.ENOTFOUND)
		_, err = other.QRCodeImage(ctx, c.PaymentLinkID, 0)
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND) // nor its image
		evs, err := other.Events(ctx, 0, 10)
		is.NoErr(err)
		is.Equal(len(evs), 0) // nor its events
	})
}

// TestService_UpdateChargeExpiry: an ACTIVE DYNAMIC charge's expiry moves, earlier or
// later, and the due pass expires it at the new time, once; OVERDUE, paid and expired
// charges are refused, as is an expiry too soon.
func TestService_UpdateChargeExpiry(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		createCharge(t, e, payments.CreateChargeParams{CorrelationID: "sooner", Value: 100, ExpiresIn: 86400})
		createCharge(t, e, payments.CreateChargeParams{CorrelationID: "later", Value: 100, ExpiresIn: 3600})
		c, err := e.svc.UpdateChargeExpiry(ctx, "sooner", t0.Add(time.Hour))
		is.NoErr(err)
		is.Equal(c.ExpiresDate, t0.Add(time.Hour))
		is.Equal(c.ExpiresIn, int64(3600)) // counted from creation
		_, err = e.svc.UpdateChargeExpiry(ctx, "later", t0.Add(48*time.Hour))
		is.NoErr(err)

		_, err = e.svc.AdvanceClock(ctx, e.clock, 2*time.Hour)
		is.NoErr(err)
		sooner, err := e.svc.GetCharge(ctx, "sooner")
		is.NoErr(err)
		is.Equal(sooner.Status, payments.ChargeExpired) // at its new, earlier time
		later, err := e.svc.GetCharge(ctx, "later")
		is.NoErr(err)
		is.Equal(later.Status, payments.ChargeActive) // not at its old one
		is.Equal(countEvents(t, e.svc, payments.EventChargeExpired), 1)

		_, err = e.svc.UpdateChargeExpiry(ctx, "sooner", t0.Add(72*time.Hour))
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // expired: nothing to move
		_, err = e.svc.UpdateChargeExpiry(ctx, "later", e.clock.Now().Add(time.Minute))
		is.Equal(payments.ErrorField(err), "expiresDate") // under 5 minutes
		_, err = e.svc.UpdateChargeExpiry(ctx, "later", time.Time{})
		is.Equal(payments.ErrorCode(err), payments.EINVALID) // the zero time is no date
		is.Equal(payments.ErrorField(err), "expiresDate")
		createCharge(t, e, payments.CreateChargeParams{CorrelationID: "boleto", Value: 100, Type: payments.ChargeOverdue, DaysForDueDate: 3})
		_, err = e.svc.UpdateChargeExpiry(ctx, "boleto", time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC))
		is.Equal(payments.ErrorCode(err), payments.EPRECONDITION) // follows its due date
		_, err = e.svc.UpdateChargeExpiry(ctx, "nope", time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC))
		is.Equal(payments.ErrorCode(err), payments.ENOTFOUND)
	})
}

// TestService_ChargeOverdue_Refused: OVERDUE inputs that could never apply, or would make
// every read of the charge large, are refused naming their field: a discount tier of more
// days early than the charge has, more than MaxDiscountTiers tiers.
func TestService_ChargeOverdue_Refused(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, e env) {
		is := is.New(t)
		p := payments.CreateChargeParams{CorrelationID: "tiers", Value: 10000, Type: payments.ChargeOverdue, DaysForDueDate: 3}
		p.Discount = &payments.DiscountSettings{Modality: payments.DiscountFixedUntilDate, DiscountFixedDate: []payments.DiscountTier{{DaysActive: 4, Value: 100}}}
		_, err := e.svc.CreateCharge(ctx, p)
		is.Equal(payments.ErrorField(err), "discount.discountFixedDate[0].daysActive") // 4 days early on a charge due in 3
		tiers := make([]payments.DiscountTier, payments.MaxDiscountTiers+1)
		for i := range tiers {
			tiers[i] = payments.DiscountTier{DaysActive: 1, Value: int64(i + 1)}
		}
		p.Discount = &payments.DiscountSettings{Modality: payments.DiscountFixedUntilDate, DiscountFixedDate: tiers}
		_, err = e.svc.CreateCharge(ctx, p)
		is.Equal(payments.ErrorField(err), "discount.discountFixedDate") // too many
		p.Discount.DiscountFixedDate = tiers[:payments.MaxDiscountTiers]
		p.Discount.DiscountFixedDate[0].DaysActive = 3
		_, err = e.svc.CreateCharge(ctx, p)
		is.NoErr(err) // as many as allowed, up to the due day
	})
}

// TestService_CreateCharge_FiveMinutes: the official document's shortest expiry, 5
// minutes, is taken (this version asked for 15 before).
func TestService_CreateCharge_FiveMinutes(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, stores[0].open(t))
	c, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "short", Value: 100, ExpiresIn: 300})
	is.NoErr(err)
	is.Equal(c.ExpiresIn, int64(300))
	is.True(c.ExpiresDate.Equal(t0.Add(5 * time.Minute)))
	_, err = e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "shorter", Value: 100, ExpiresIn: 299})
	is.Equal(payments.ErrorField(err), "expiresIn")
}
