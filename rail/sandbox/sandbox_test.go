package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/rail/sandbox"
)

var ctx = context.Background()

// t0 is where every test clock starts.
var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// endToEndRE is the shape of a Pix endToEndId: E (D for a return), ISPB, yyyyMMddHHmm, 11 alphanumerics.
var endToEndRE = regexp.MustCompile(`^[ED][0-9]{8}[0-9]{12}[A-Za-z0-9]{11}$`)

func payOrder(id string, value int64, key string) rail.PixOrder {
	return rail.PixOrder{ID: id, Kind: rail.OrderPayment, Key: key, KeyType: brcode.KeyEmail, Value: value, SentAt: t0}
}

func accountOrder(id, account string) rail.PixOrder {
	return rail.PixOrder{ID: id, Kind: rail.OrderPayment, Value: 100, SentAt: t0, Account: &rail.BankAccount{
		ISPB: "12345678", Branch: "0001", Account: account, AccountType: "CACC", HolderName: "Ana Silva", HolderTaxID: "52998224725"}}
}

// invalidField is the Field of the *rail.InvalidError err carries, or "" when it carries none.
func invalidField(err error) string {
	var inv *rail.InvalidError
	if errors.As(err, &inv) {
		return inv.Field
	}
	return ""
}

func TestRail_Send(t *testing.T) {
	t.Run("Immediate", func(t *testing.T) {
		is := is.New(t)
		r := sandbox.New(payments.NewManualClock(t0), 0)
		s, err := r.Send(ctx, payOrder("o1", 1000, "ana@example.com"))
		is.NoErr(err)
		is.Equal(s.Status, rail.SettlementConfirmed) // confirmed at once with no delay
		is.Equal(s.At, t0)
		is.Equal(s.Reason, "")
		is.Equal(len(s.EndToEndID), 32)               // the real length
		is.True(endToEndRE.MatchString(s.EndToEndID)) // and shape
		is.Equal(s.EndToEndID[:21], "E"+sandbox.ISPB+"202611221200")
		is.True(strings.HasPrefix(s.BankRef, "SBX")) // the sandbox bank's reference
		is.Equal(len(s.BankRef), 3+16)

		again, err := r.Send(ctx, payOrder("o1", 1000, "ana@example.com"))
		is.NoErr(err)
		is.Equal(again, s) // idempotent by order id
		restarted := sandbox.New(payments.NewManualClock(t0), 0)
		_, err = restarted.Status(ctx, payOrder("o1", 1000, "ana@example.com"))
		is.True(errors.Is(err, rail.ErrUnknownOrder)) // a restart forgets what was sent, and says so
		st, err := restarted.Send(ctx, payOrder("o1", 1000, "ana@example.com"))
		is.NoErr(err)
		is.Equal(st, s) // and the resend settles the order as the first send did
		st, err = restarted.Status(ctx, payOrder("o1", 1000, "ana@example.com"))
		is.NoErr(err)
		is.Equal(st, s) // which Status then reports

		other, err := r.Send(ctx, payOrder("o2", 1000, "ana@example.com"))
		is.NoErr(err)
		is.True(other.EndToEndID != s.EndToEndID) // each order its own endToEndId
		is.True(other.BankRef != s.BankRef)       // and its own bank reference
	})
	t.Run("Delayed", func(t *testing.T) {
		is := is.New(t)
		clock := payments.NewManualClock(t0)
		r := sandbox.New(clock, 10*time.Second)
		o := payOrder("o1", 1000, "ana@example.com")
		s, err := r.Send(ctx, o)
		is.NoErr(err)
		is.Equal(s.Status, rail.SettlementPending)    // pending until the delay passes
		is.True(endToEndRE.MatchString(s.EndToEndID)) // the Pix is out: it has its id already
		clock.Advance(9 * time.Second)
		s2, err := r.Status(ctx, o)
		is.NoErr(err)
		is.Equal(s2, s) // still pending just before
		clock.Advance(time.Second)
		s3, err := r.Status(ctx, o)
		is.NoErr(err)
		is.Equal(s3.Status, rail.SettlementConfirmed) // confirmed at SentAt+delay
		is.Equal(s3.At, t0.Add(10*time.Second))
		is.Equal(s3.EndToEndID, s.EndToEndID) // same Pix
		is.Equal(s3.BankRef, s.BankRef)       // same bank reference
		s4, err := r.Send(ctx, o)
		is.NoErr(err)
		is.Equal(s4, s3) // a resend after settling reports the outcome
	})
	t.Run("Refund", func(t *testing.T) {
		is := is.New(t)
		r := sandbox.New(nil, 0)
		s, err := r.Send(ctx, rail.PixOrder{ID: "r1", Kind: rail.OrderRefund, EndToEndID: "E99999999202611221200abcdefghijk", Value: 100, SentAt: t0})
		is.NoErr(err)
		is.Equal(s.Status, rail.SettlementConfirmed)
		is.Equal(s.EndToEndID[:1], "D") // a Pix return
		is.True(endToEndRE.MatchString(s.EndToEndID))
	})
	t.Run("Withdrawal", func(t *testing.T) {
		is := is.New(t)
		s, err := sandbox.New(nil, 0).Send(ctx, rail.PixOrder{ID: "w1", Kind: rail.OrderWithdrawal, Value: 100, SentAt: t0})
		is.NoErr(err)
		is.Equal(s.Status, rail.SettlementConfirmed) // no key needed
	})
	t.Run("BankAccount", func(t *testing.T) {
		is := is.New(t)
		s, err := sandbox.New(nil, 0).Send(ctx, accountOrder("m1", "1234567-8"))
		is.NoErr(err)
		is.Equal(s.Status, rail.SettlementConfirmed) // an account that is no trigger
		is.True(endToEndRE.MatchString(s.EndToEndID))
	})
	t.Run("SandboxSaysSo", func(t *testing.T) {
		is := is.New(t)
		is.True(rail.IsSandbox(sandbox.New(nil, 0))) // its money is make-believe
	})
}

func TestRail_Failures(t *testing.T) {
	cases := []struct {
		name    string
		o       rail.PixOrder
		refused bool // refused by Send, even with a delay: nothing is sent
		reason  string
	}{
		{"KeyNotFound", payOrder("o1", 100, sandbox.KeyNotFound), true, rail.ReasonInvalidPixKey},
		{"KeyNotFoundAnyCase", payOrder("o1", 100, "Pix-Key-Not-Found@Woovi.com"), true, rail.ReasonInvalidPixKey},
		{"MalformedKey", payOrder("o1", 100, "not-a-key"), true, rail.ReasonInvalidPixKey},
		{"AccountNotFound", accountOrder("o1", "1111111"), true, rail.ReasonAccountNotFound},
		{"AccountISOCode", accountOrder("o1", "1010115-0"), true, rail.ReasonMD01},
		{"BankError", payOrder("o1", 100, sandbox.KeyBankError), false, rail.ReasonBankError},
		{"NotEnoughBalance", payOrder("o1", sandbox.ValueNotEnoughBalance, "ana@example.com"), false, rail.ReasonNotEnoughBalance},
		{"AccountNotEnoughBalance", accountOrder("o1", "2222222"), false, rail.ReasonNotEnoughBalance},
		{"AccountBankError", accountOrder("o1", "7777777"), false, rail.ReasonBankError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			for _, delay := range []time.Duration{0, time.Minute} {
				clock := payments.NewManualClock(t0)
				r := sandbox.New(clock, delay)
				s, err := r.Send(ctx, tc.o)
				if tc.refused {
					refusal, ok := rail.AsRefused(err)
					is.True(ok)                         // refused before sending, even with a delay
					is.Equal(refusal.Reason, tc.reason) // for its documented reason
					is.True(refusal.Detail != "")       // in the sandbox's words
					st, err := r.Status(ctx, tc.o)
					is.NoErr(err)
					is.Equal(st.Status, rail.SettlementFailed) // Status says the order failed
					is.Equal(st.Reason, tc.reason)             // for the same reason
					is.Equal(st.EndToEndID, "")                // and no Pix went out
					is.Equal(st.At, t0)                        // at once
					continue
				}
				is.NoErr(err) // the order is accepted: it fails when it settles
				if delay > 0 {
					is.Equal(s.Status, rail.SettlementPending) // until then it is pending
					clock.Advance(delay)
					s, err = r.Status(ctx, tc.o)
					is.NoErr(err)
				}
				is.Equal(s.Status, rail.SettlementFailed)     // the trigger fails the order
				is.Equal(s.Reason, tc.reason)                 // for its documented reason
				is.True(endToEndRE.MatchString(s.EndToEndID)) // a Pix went out
				is.Equal(s.At, t0.Add(delay))                 // when it settled
			}
		})
	}
}

func TestAccountFailure(t *testing.T) {
	is := is.New(t)
	want := map[string]string{
		"1111111": rail.ReasonAccountNotFound, "2222222": rail.ReasonNotEnoughBalance, "3333333": rail.ReasonInvalidPixKey,
		"4444444": rail.ReasonAC03, "5555555": rail.ReasonAC06, "6666666": rail.ReasonAM04,
		"7777777": rail.ReasonBankError, "8888888": rail.ReasonBE01, "9999999": rail.ReasonDS04,
		"1010101": rail.ReasonAccountNotFound, "1010102": rail.ReasonNotEnoughBalance, "1010103": rail.ReasonInvalidPixKey,
		"1010104": rail.ReasonAC03, "1010105": rail.ReasonAC06, "1010106": rail.ReasonAC07, "1010107": rail.ReasonAC14,
		"1010108": rail.ReasonAG03, "1010109": rail.ReasonAM02, "1010110": rail.ReasonAM04, "1010111": rail.ReasonAM09,
		"1010112": rail.ReasonBE01, "1010113": rail.ReasonBE17, "1010114": rail.ReasonDS04, "1010115": rail.ReasonMD01,
	}
	for account, code := range want {
		is.Equal(sandbox.AccountFailure(account), code)      // the documented table
		is.Equal(sandbox.AccountFailure(account+"-7"), code) // a check digit is ignored
		is.Equal(sandbox.AccountFailure(" "+account), code)  // and so are spaces around it
	}
	for _, account := range []string{"", "0000000", "1010100", "1010116", "111111", "11111111", "123456a", "1234567"} {
		is.Equal(sandbox.AccountFailure(account), "") // every other number succeeds
	}
}

// Invalid orders and ended contexts: railtest.Run (TestConformance) checks every case.

func TestRail_ResolveKey(t *testing.T) {
	is := is.New(t)
	r := sandbox.New(nil, 0)
	o, err := r.ResolveKey(ctx, "ana@example.com", brcode.KeyEmail)
	is.NoErr(err)
	is.True(o.Name != "")             // a name
	is.True(brcode.ValidCPF(o.TaxID)) // a valid CPF
	is.Equal(o.Bank, sandbox.ISPB)
	is.Equal(o.Branch, "0001")
	is.Equal(len(o.Account), 8)
	again, err := sandbox.New(nil, 0).ResolveKey(ctx, "ANA@example.com", "")
	is.NoErr(err)
	is.Equal(again, o) // deterministic, from the canonical key
	other, err := r.ResolveKey(ctx, "bruno@example.com", brcode.KeyEmail)
	is.NoErr(err)
	is.True(other != o) // another key, another owner

	cpf, err := r.ResolveKey(ctx, "529.982.247-25", brcode.KeyCPF)
	is.NoErr(err)
	is.Equal(cpf.TaxID, "52998224725") // a CPF key belongs to that CPF
	cnpj, err := r.ResolveKey(ctx, "11222333000181", "")
	is.NoErr(err)
	is.Equal(cnpj.TaxID, "11222333000181") // a CNPJ key to that CNPJ

	for i := range 200 { // every synthesized CPF is valid
		o, err := r.ResolveKey(ctx, fmt.Sprintf("user%d@example.com", i), brcode.KeyEmail)
		is.NoErr(err)
		is.True(brcode.ValidCPF(o.TaxID))
	}

	_, err = r.ResolveKey(ctx, sandbox.KeyNotFound, brcode.KeyEmail)
	is.True(errors.Is(err, rail.ErrKeyNotFound)) // the not-found trigger
	_, err = r.ResolveKey(ctx, sandbox.KeyBankError, brcode.KeyEmail)
	is.NoErr(err) // the bank-error key exists; sending to it fails
	_, err = r.ResolveKey(ctx, "ana@example.com", brcode.KeyCPF)
	is.Equal(invalidField(err), "key") // not a key of that type
}

func charge(txid string) rail.Charge {
	return rail.Charge{TxID: txid, Key: "ana@example.com", Value: 1500, Expires: t0.Add(time.Hour),
		MerchantName: "Loja da Ana", MerchantCity: "Sao Paulo", Message: "pedido 1"}
}

func TestRail_IssueCharge(t *testing.T) {
	t.Run("Code", func(t *testing.T) {
		is := is.New(t)
		ic, err := sandbox.New(nil, 0).IssueCharge(ctx, charge("tx1"))
		is.NoErr(err)
		is.Equal(ic.TxID, "tx1")
		is.Equal(ic.Location, "") // the code carries the charge itself
		code, err := brcode.Parse(ic.BRCode)
		is.NoErr(err)                         // a valid BR Code
		is.Equal(code.Key, "ana@example.com") // to the charge's key
		is.Equal(code.Amount, int64(1500))    // for its value
		is.Equal(code.TxID, "tx1")            // carrying its txid

		long := strings.Repeat("a", 25) + "1234567"
		ic, err = sandbox.New(nil, 0).IssueCharge(ctx, charge(long))
		is.NoErr(err) // an API Pix txid, 32 characters
		is.Equal(ic.TxID, long)
		code, err = brcode.Parse(ic.BRCode)
		is.NoErr(err)
		is.Equal(code.TxID, long[:25]) // cut to what a static code carries
	})
	t.Run("Invalid", func(t *testing.T) {
		r := sandbox.New(nil, 0)
		cases := []struct {
			name  string
			edit  func(*rail.Charge)
			field string
		}{
			{"NoTxID", func(c *rail.Charge) { c.TxID = "" }, "txid"},
			{"LongTxID", func(c *rail.Charge) { c.TxID = strings.Repeat("a", 36) }, "txid"},
			{"ZeroValue", func(c *rail.Charge) { c.Value = 0 }, "value"},
			{"NegativeValue", func(c *rail.Charge) { c.Value = -1 }, "value"},
			{"BadKey", func(c *rail.Charge) { c.Key = "not a key" }, "charge"},
			{"TxIDNotAlphanumeric", func(c *rail.Charge) { c.TxID = "tx-1" }, "txid"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				c := charge("tx1")
				tc.edit(&c)
				_, err := r.IssueCharge(ctx, c)
				is.Equal(invalidField(err), tc.field) // a charge the bank cannot register
				err = r.RemoveCharge(ctx, c.TxID)
				is.True(errors.Is(err, rail.ErrUnknownCharge)) // and did not
			})
		}
	})
	t.Run("TxIDOfAnotherCharge", func(t *testing.T) {
		is := is.New(t)
		r := sandbox.New(nil, 0)
		first, err := r.IssueCharge(ctx, charge("tx1"))
		is.NoErr(err)
		other := charge("tx1")
		other.Value++
		_, err = r.IssueCharge(ctx, other)
		is.Equal(invalidField(err), "txid") // a txid names one charge
		other = charge("tx1")
		other.Expires = other.Expires.Add(time.Second)
		_, err = r.IssueCharge(ctx, other)
		is.Equal(invalidField(err), "txid") // another expiry is another charge
		again, err := r.IssueCharge(ctx, charge("tx1"))
		is.NoErr(err)
		is.Equal(again, first) // the first is kept
	})
	t.Run("AgainAfterRemove", func(t *testing.T) {
		is := is.New(t)
		r := sandbox.New(nil, 0)
		_, err := r.IssueCharge(ctx, charge("tx1"))
		is.NoErr(err)
		is.NoErr(r.RemoveCharge(ctx, "tx1"))
		other := charge("tx1")
		other.Value = 999
		ic, err := r.IssueCharge(ctx, other)
		is.NoErr(err) // a removed charge's txid is free again
		code, err := brcode.Parse(ic.BRCode)
		is.NoErr(err)
		is.Equal(code.Amount, int64(999)) // for the new charge
		is.NoErr(r.RemoveCharge(ctx, "tx1"))
	})
	t.Run("RemoveKeepsOthers", func(t *testing.T) {
		is := is.New(t)
		r := sandbox.New(nil, 0)
		_, err := r.IssueCharge(ctx, charge("tx1"))
		is.NoErr(err)
		_, err = r.IssueCharge(ctx, charge("tx2"))
		is.NoErr(err)
		is.NoErr(r.RemoveCharge(ctx, "tx1"))
		is.True(errors.Is(r.RemoveCharge(ctx, "tx1"), rail.ErrUnknownCharge)) // gone
		is.NoErr(r.RemoveCharge(ctx, "tx2"))                                  // the other is still there
	})
}

func TestRail_Receive(t *testing.T) {
	good := rail.ReceivedPix{EndToEndID: "E1", TxID: "tx1", Key: "ana@example.com", Value: 100, At: t0}
	t.Run("Invalid", func(t *testing.T) {
		cases := []struct {
			name  string
			edit  func(*rail.ReceivedPix)
			field string
		}{
			{"NoEndToEndID", func(p *rail.ReceivedPix) { p.EndToEndID = "" }, "endToEndId"},
			{"ZeroValue", func(p *rail.ReceivedPix) { p.Value = 0 }, "value"},
			{"NegativeValue", func(p *rail.ReceivedPix) { p.Value = -5 }, "value"},
			{"NoTime", func(p *rail.ReceivedPix) { p.At = time.Time{} }, "at"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				r := sandbox.New(nil, 0)
				p := good
				tc.edit(&p)
				is.Equal(invalidField(r.Receive(p)), tc.field) // a Pix no bank delivers
				page, err := r.ListReceived(ctx, rail.ReceivedQuery{})
				is.NoErr(err)
				is.Equal(len(page.Pix), 0) // and nothing was recorded
			})
		}
	})
	t.Run("SameEndToEndIDKeepsTheFirst", func(t *testing.T) {
		is := is.New(t)
		r := sandbox.New(nil, 0)
		is.NoErr(r.Receive(good))
		other := good
		other.Value, other.At = 999, t0.Add(time.Minute)
		is.NoErr(r.Receive(other)) // the same Pix delivered again is no error
		page, err := r.ListReceived(ctx, rail.ReceivedQuery{From: t0})
		is.NoErr(err)
		is.Equal(page.Pix, []rail.ReceivedPix{good}) // and changes nothing
	})
	t.Run("TimeInUTC", func(t *testing.T) {
		is := is.New(t)
		r := sandbox.New(nil, 0)
		p := good
		p.At = t0.In(time.FixedZone("BRT", -3*60*60))
		is.NoErr(r.Receive(p))
		page, err := r.ListReceived(ctx, rail.ReceivedQuery{From: t0, To: t0.Add(time.Second)})
		is.NoErr(err)
		is.Equal(len(page.Pix), 1)
		is.Equal(page.Pix[0].At, t0) // listed in UTC, the same instant
	})
}

func TestRail_ListReceived(t *testing.T) {
	t.Run("WindowEndsBeforeItStarts", func(t *testing.T) {
		is := is.New(t)
		_, err := sandbox.New(nil, 0).ListReceived(ctx, rail.ReceivedQuery{From: t0, To: t0.Add(-time.Nanosecond)})
		is.Equal(invalidField(err), "to") // no such window
	})
	t.Run("OpenEnded", func(t *testing.T) {
		is := is.New(t)
		r := sandbox.New(nil, 0)
		for i, at := range []time.Time{t0.Add(-time.Second), t0, t0.AddDate(1, 0, 0)} {
			is.NoErr(r.Receive(rail.ReceivedPix{EndToEndID: fmt.Sprintf("E%d", i), Value: 100, At: at}))
		}
		page, err := r.ListReceived(ctx, rail.ReceivedQuery{From: t0})
		is.NoErr(err)
		is.Equal(len(page.Pix), 2) // a zero To lists everything from From on
		is.Equal(page.Pix[0].EndToEndID, "E1")
		is.Equal(page.Pix[1].EndToEndID, "E2")
		is.Equal(page.Cursor, "") // on one page
	})
	t.Run("DefaultLimit", func(t *testing.T) {
		is := is.New(t)
		r := sandbox.New(nil, 0)
		for i := range 101 {
			is.NoErr(r.Receive(rail.ReceivedPix{EndToEndID: fmt.Sprintf("E%03d", i), Value: 100, At: t0}))
		}
		q := rail.ReceivedQuery{From: t0, To: t0.Add(time.Hour)}
		page, err := r.ListReceived(ctx, q)
		is.NoErr(err)
		is.Equal(len(page.Pix), 100) // a page of 100 when the query sets no limit
		is.True(page.Cursor != "")   // and another to come
		q.Cursor = page.Cursor
		page, err = r.ListReceived(ctx, q)
		is.NoErr(err)
		is.Equal(len(page.Pix), 1) // the last one
		is.Equal(page.Pix[0].EndToEndID, "E100")
		is.Equal(page.Cursor, "")
	})
	t.Run("SameInstantByEndToEndID", func(t *testing.T) {
		is := is.New(t)
		r := sandbox.New(nil, 0)
		for _, id := range []string{"E3", "E1", "E2"} {
			is.NoErr(r.Receive(rail.ReceivedPix{EndToEndID: id, Value: 100, At: t0}))
		}
		var ids []string
		q := rail.ReceivedQuery{From: t0, To: t0.Add(time.Second), Limit: 1}
		for {
			page, err := r.ListReceived(ctx, q)
			is.NoErr(err)
			for _, p := range page.Pix {
				ids = append(ids, p.EndToEndID)
			}
			if page.Cursor == "" {
				break
			}
			q.Cursor = page.Cursor
		}
		is.Equal(ids, []string{"E1", "E2", "E3"}) // Pix of one instant in endToEndId order, one per page
	})
	t.Run("ExactlyOnePage", func(t *testing.T) {
		is := is.New(t)
		r := sandbox.New(nil, 0)
		for i := range 4 {
			is.NoErr(r.Receive(rail.ReceivedPix{EndToEndID: fmt.Sprintf("E%d", i), Value: 100, At: t0.Add(time.Duration(i) * time.Second)}))
		}
		page, err := r.ListReceived(ctx, rail.ReceivedQuery{From: t0, To: t0.Add(time.Hour), Limit: 4})
		is.NoErr(err)
		is.Equal(len(page.Pix), 4) // a window that fills the page
		is.Equal(page.Cursor, "")  // needs no other
	})
}

// The sandbox rail settles orders from the order alone; its triggers make failures on purpose.
func ExampleRail() {
	ctx := context.Background()
	clock := payments.NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	r := sandbox.New(clock, 5*time.Second)

	o := rail.PixOrder{ID: "order-1", Kind: rail.OrderPayment, Key: "ana@example.com", Value: 1500, SentAt: clock.Now()}
	s, _ := r.Send(ctx, o)
	fmt.Println(s.Status)
	clock.Advance(5 * time.Second)
	s, _ = r.Status(ctx, o)
	fmt.Println(s.Status, len(s.EndToEndID))

	o = rail.PixOrder{ID: "order-2", Kind: rail.OrderPayment, Key: sandbox.KeyNotFound, Value: 1500, SentAt: clock.Now()}
	_, err := r.Send(ctx, o)
	if refusal, ok := rail.AsRefused(err); ok {
		fmt.Println("refused", refusal.Reason)
	}
	s, _ = r.Status(ctx, o)
	fmt.Println(s.Status, s.Reason)
	// Output:
	// PENDING
	// CONFIRMED 32
	// refused INVALID_PIX_KEY
	// FAILED INVALID_PIX_KEY
}
