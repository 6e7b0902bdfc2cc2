package payments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
	"github.com/pixfoundry/payments/store/memory"
	"github.com/pixfoundry/payments/store/storetest"
)

// Test hooks: money can only enter the ledger through flows that come later (a Pix
// received), so the external tests fund books through these. They exist only in the test
// binary.

// FundSubaccountForTest credits a subaccount (canonical key) from the Pix network.
func (s *Service) FundSubaccountForTest(ctx context.Context, pixKey string, value int64) error {
	return s.update(ctx, func(t *txn) error {
		_, err := t.post("test.fund", pixKey,
			Posting{Book: bookPixNetwork, Amount: -value}, Posting{Book: subaccountBook(pixKey), Amount: value})
		return err
	})
}

// FundAccountForTest credits an account's available balance from the Pix network.
func (s *Service) FundAccountForTest(ctx context.Context, accountID string, value int64) error {
	return s.update(ctx, func(t *txn) error {
		_, err := t.post("test.fund", accountID,
			Posting{Book: bookPixNetwork, Amount: -value}, Posting{Book: accountBook(accountID), Amount: value})
		return err
	})
}

// HoldForTest runs t.hold in its own transaction.
func (s *Service) HoldForTest(ctx context.Context, accountID string, value int64, ref string) error {
	return s.update(ctx, func(t *txn) error { _, err := t.hold(accountID, value, "test.hold", ref); return err })
}

// SettleHoldForTest runs t.settleHold in its own transaction.
func (s *Service) SettleHoldForTest(ctx context.Context, accountID string, value int64, ref string) error {
	return s.update(ctx, func(t *txn) error { _, err := t.settleHold(accountID, value, "test.settle", ref); return err })
}

// ReleaseHoldForTest runs t.releaseHold in its own transaction.
func (s *Service) ReleaseHoldForTest(ctx context.Context, accountID string, value int64, ref string) error {
	return s.update(ctx, func(t *txn) error { _, err := t.releaseHold(accountID, value, "test.release", ref); return err })
}

var ictx = context.Background()

// ienv is a Service under an internal test, with its clock and store.
type ienv struct {
	svc   *Service
	clock *ManualClock
	store store.Store
}

// eachStoreInternal runs fn once per store driver, each on a fresh Service.
func eachStoreInternal(t *testing.T, fn func(t *testing.T, e ienv)) {
	t.Helper()
	opens := []struct {
		name string
		open func(t *testing.T) store.Store
	}{
		{"memory", func(t *testing.T) store.Store { return memory.New() }},
		{"bolt", func(t *testing.T) store.Store {
			s, err := bolt.Open(filepath.Join(t.TempDir(), "payments.db"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"rerun", func(t *testing.T) store.Store { return storetest.Rerun(memory.New()) }},
	}
	for _, o := range opens {
		t.Run(o.name, func(t *testing.T) {
			st := o.open(t)
			t.Cleanup(func() { st.Close() })
			clock := NewManualClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
			svc, err := New(st, Options{Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			fn(t, ienv{svc: svc, clock: clock, store: st})
		})
	}
}

// auditOK fails the test unless the ledger audits clean.
func auditOK(t *testing.T, s *Service) AuditReport {
	t.Helper()
	rep, err := s.Audit(ictx)
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	if !rep.OK() {
		t.Fatalf("audit found problems:\n%s", strings.Join(rep.Problems, "\n"))
	}
	return rep
}

// bookBalance reads a book's stored balance (0 for a book not created yet).
func bookBalance(t *testing.T, s *Service, id string) int64 {
	t.Helper()
	var b book
	err := s.view(ictx, func(tx *txn) error { return tx.get(collBooks, id, "book", &b) })
	if err != nil && ErrorCode(err) != ENOTFOUND {
		t.Fatal(err)
	}
	return b.Balance
}

// entriesOf lists the ids of the journal entries of an index, in order, and its total.
func entriesOf(t *testing.T, s *Service, index string) ([]string, int) {
	t.Helper()
	var ids []string
	var total int
	err := s.view(ictx, func(tx *txn) error {
		es, n, err := list[Entry](tx, collJournal, store.Query{Index: index, Limit: MaxLimit}, nil)
		for _, e := range es {
			ids = append(ids, e.ID)
		}
		total = n
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids, total
}

func defaultAccountID(t *testing.T, s *Service) string {
	t.Helper()
	a, err := s.DefaultAccount(ictx)
	if err != nil {
		t.Fatal(err)
	}
	return a.AccountID
}

func TestPost(t *testing.T) {
	t.Parallel()
	eachStoreInternal(t, func(t *testing.T, e ienv) {
		t.Run("Balanced", func(t *testing.T) {
			is := is.New(t)
			acct := accountBook(defaultAccountID(t, e.svc))
			var got []Entry
			err := e.svc.update(ictx, func(tx *txn) error {
				e1, err := tx.post("pix.received", "tx1",
					Posting{Book: bookPixNetwork, Amount: -1000}, Posting{Book: acct, Amount: 1000})
				if err != nil {
					return err
				}
				e2, err := tx.post("fee", "tx1", Posting{Book: acct, Amount: -80}, Posting{Book: bookFees, Amount: 80})
				got = append(got, e1, e2)
				return err
			})
			is.NoErr(err)
			is.Equal(got[0].ID, "00000000000000000001") // ids are the zero-padded sequence
			is.Equal(got[1].ID, "00000000000000000002")
			is.Equal(got[0].Time, e.clock.Now())                                    // time of the operation
			is.Equal(got[1].Postings, []Posting{{acct, -80}, {bookFees, 80}})       // postings as given
			is.Equal(bookBalance(t, e.svc, acct), int64(920))                       // 1000 in, 80 fee out
			is.Equal(bookBalance(t, e.svc, bookPixNetwork), int64(-1000))           // the network is the other side
			is.Equal(bookBalance(t, e.svc, bookFees), int64(80))                    // system book created on first use
			ids, total := entriesOf(t, e.svc, bookIndex(acct))                      // the account's statement
			is.Equal(ids, []string{"00000000000000000001", "00000000000000000002"}) // lists both entries
			is.Equal(total, 2)                                                      // and counts them
			ids, _ = entriesOf(t, e.svc, bookIndex(bookFees))                       // the fee book's statement
			is.Equal(ids, []string{"00000000000000000002"})                         // lists only the fee
			auditOK(t, e.svc)
		})
		t.Run("SameBookTwice", func(t *testing.T) {
			is := is.New(t)
			acct := accountBook(defaultAccountID(t, e.svc))
			before := bookBalance(t, e.svc, acct)
			var en Entry
			err := e.svc.update(ictx, func(tx *txn) error {
				var err error
				en, err = tx.post("pix.received", "tx2",
					Posting{Book: bookPixNetwork, Amount: -500}, Posting{Book: acct, Amount: 500},
					Posting{Book: acct, Amount: -50}, Posting{Book: bookFees, Amount: 50})
				return err
			})
			is.NoErr(err)
			is.Equal(bookBalance(t, e.svc, acct), before+450) // both postings applied
			ids, total := entriesOf(t, e.svc, bookIndex(acct))
			is.Equal(ids[len(ids)-1], en.ID) // the entry is in the statement
			is.Equal(total, len(ids))        // once, not twice
			auditOK(t, e.svc)
		})
	})
}

func TestPost_Rejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		kind     string
		postings []Posting
	}{
		{"Unbalanced", "x", []Posting{{bookPixNetwork, -100}, {bookFees, 99}}},
		{"ZeroAmount", "x", []Posting{{bookPixNetwork, 0}, {bookFees, 0}}},
		{"OnePosting", "x", []Posting{{bookPixNetwork, 0}}},
		{"NoKind", "", []Posting{{bookPixNetwork, -1}, {bookFees, 1}}},
		{"EmptyBook", "x", []Posting{{"", -1}, {bookFees, 1}}},
		{"UnknownSystemBook", "x", []Posting{{"system:nope", -1}, {bookFees, 1}}},
		{"MissingAccountBook", "x", []Posting{{bookPixNetwork, -1}, {accountBook("nope"), 1}}},
		{"SumOverflows", "x", []Posting{{bookPixNetwork, math.MaxInt64}, {bookFees, math.MaxInt64}, {bookCashback, 2}}},
	}
	eachStoreInternal(t, func(t *testing.T, e ienv) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				err := e.svc.update(ictx, func(tx *txn) error { _, err := tx.post(tc.kind, "ref", tc.postings...); return err })
				is.Equal(ErrorCode(err), EINTERNAL) // a bug in the caller, never caller input
				_, total := entriesOf(t, e.svc, indexAll)
				is.Equal(total, 0)                                        // no entry written
				is.Equal(bookBalance(t, e.svc, bookPixNetwork), int64(0)) // no book changed
				auditOK(t, e.svc)
			})
		}
	})
}

// TestPost_BalanceOverflow: a posting that would take a balance past the int64 range is
// refused as a precondition on "value" before anything is written; a balance never wraps.
func TestPost_BalanceOverflow(t *testing.T) {
	t.Parallel()
	eachStoreInternal(t, func(t *testing.T, e ienv) {
		is := is.New(t)
		for _, key := range []string{"a@example.com", "b@example.com"} {
			_, _, err := e.svc.CreateSubaccount(ictx, CreateSubaccountParams{PixKey: key, Name: key})
			is.NoErr(err)
		}
		a, b := subaccountBook("a@example.com"), subaccountBook("b@example.com")
		// The Pix network's book holds minus all the company's money: at most MaxInt64+1.
		is.NoErr(e.svc.FundSubaccountForTest(ictx, "a@example.com", 2))
		is.NoErr(e.svc.FundSubaccountForTest(ictx, "b@example.com", math.MaxInt64-1))
		_, before := entriesOf(t, e.svc, indexAll)

		for i, tc := range []struct {
			postings []Posting
			b        int64 // b's balance before the refused entry
		}{
			{[]Posting{{a, -2}, {b, 2}}, math.MaxInt64 - 1},                                                           // b would pass MaxInt64
			{[]Posting{{bookPixNetwork, math.MinInt64}, {bookFees, math.MaxInt64}, {bookFees, 1}}, math.MaxInt64 - 2}, // the network would pass MinInt64
		} {
			var refused error
			var bb int64
			err := e.svc.update(ictx, func(tx *txn) error { // no assertion in here: bolt runs it on its writer goroutine
				_, refused = tx.post("test", fmt.Sprint("refused", i), tc.postings...)
				var err error
				if bb, err = tx.bookBalance(b); err != nil {
					return err
				}
				_, err = tx.post("test", fmt.Sprint("ok", i), Posting{b, -1}, Posting{a, 1})
				return err // post wrote nothing, so the transaction carries on
			})
			is.NoErr(err)
			is.Equal(ErrorCode(refused), EPRECONDITION) // a clean refusal, not internal
			is.Equal(ErrorField(refused), "value")      // naming the amount
			is.Equal(bb, tc.b)                          // b unchanged by the refused entry, inside the transaction
		}
		is.Equal(bookBalance(t, e.svc, a), int64(4))
		is.Equal(bookBalance(t, e.svc, b), int64(math.MaxInt64-3))
		_, after := entriesOf(t, e.svc, indexAll)
		is.Equal(after, before+2) // only the entries that fit
		auditOK(t, e.svc)
	})
}

func TestPost_NoOverdraft(t *testing.T) {
	t.Parallel()
	eachStoreInternal(t, func(t *testing.T, e ienv) {
		is := is.New(t)
		_, _, err := e.svc.CreateSubaccount(ictx, CreateSubaccountParams{PixKey: "a@example.com", Name: "A"})
		is.NoErr(err)
		_, _, err = e.svc.CreateSubaccount(ictx, CreateSubaccountParams{PixKey: "b@example.com", Name: "B"})
		is.NoErr(err)
		is.NoErr(e.svc.FundSubaccountForTest(ictx, "a@example.com", 100))
		a, b := subaccountBook("a@example.com"), subaccountBook("b@example.com")

		err = e.svc.update(ictx, func(tx *txn) error {
			_, err := tx.post("transfer", "t1", Posting{a, -150}, Posting{b, 150})
			is.Equal(ErrorCode(err), EPRECONDITION) // would leave a below zero
			is.Equal(ErrorField(err), "value")
			is.Equal(ErrorMessage(err), "insufficient balance")
			// post wrote nothing, so the transaction can carry on and commit.
			ba, err := tx.bookBalance(a)
			is.NoErr(err)
			is.Equal(ba, int64(100)) // a unchanged inside the transaction
			bb, err := tx.bookBalance(b)
			is.NoErr(err)
			is.Equal(bb, int64(0)) // b unchanged inside the transaction
			_, err = tx.post("transfer", "t2", Posting{a, -100}, Posting{b, 100})
			return err // the whole balance may move
		})
		is.NoErr(err)
		is.Equal(bookBalance(t, e.svc, a), int64(0))
		is.Equal(bookBalance(t, e.svc, b), int64(100))
		ids, _ := entriesOf(t, e.svc, indexAll)
		is.Equal(ids, []string{"00000000000000000001", "00000000000000000002"}) // the refused entry took no id
		auditOK(t, e.svc)
	})
}

func TestHold_Errors(t *testing.T) {
	t.Parallel()
	eachStoreInternal(t, func(t *testing.T, e ienv) {
		is := is.New(t)
		id := defaultAccountID(t, e.svc)
		is.NoErr(e.svc.FundAccountForTest(ictx, id, 1000))
		is.NoErr(e.svc.HoldForTest(ictx, id, 400, "r1"))

		err := e.svc.HoldForTest(ictx, id, 100, "r1")
		is.Equal(ErrorCode(err), EINTERNAL) // a ref holds once
		err = e.svc.HoldForTest(ictx, id, 0, "r2")
		is.Equal(ErrorField(err), "value") // nothing to hold
		err = e.svc.HoldForTest(ictx, "nope", 100, "r3")
		is.Equal(ErrorCode(err), ENOTFOUND) // unknown account
		err = e.svc.HoldForTest(ictx, id, 601, "r4")
		is.Equal(ErrorCode(err), EPRECONDITION) // more than available
		err = e.svc.SettleHoldForTest(ictx, id, 100, "nope")
		is.Equal(ErrorCode(err), EINTERNAL) // no such hold
		err = e.svc.ReleaseHoldForTest(ictx, "other", 100, "r1")
		is.Equal(ErrorCode(err), EINTERNAL) // the hold is on another account
		err = e.svc.SettleHoldForTest(ictx, id, 401, "r1")
		is.Equal(ErrorCode(err), EPRECONDITION) // more than the hold
		is.NoErr(e.svc.SettleHoldForTest(ictx, id, 400, "r1"))
		err = e.svc.ReleaseHoldForTest(ictx, id, 1, "r1")
		is.Equal(ErrorCode(err), EPRECONDITION) // a resolved hold resolves no more
		is.Equal(bookBalance(t, e.svc, accountBook(id)), int64(600))
		is.Equal(bookBalance(t, e.svc, blockedBook(id)), int64(0))
		auditOK(t, e.svc)
	})
}

func TestAudit_Paging(t *testing.T) {
	t.Parallel()
	eachStoreInternal(t, func(t *testing.T, e ienv) {
		is := is.New(t)
		acct := accountBook(defaultAccountID(t, e.svc))
		const n = 2*scanPage + 7 // several pages, all at the same time
		err := e.svc.update(ictx, func(tx *txn) error {
			for i := range n {
				if _, err := tx.post("test", fmt.Sprint(i), Posting{bookPixNetwork, -1}, Posting{acct, 1}); err != nil {
					return err
				}
			}
			return nil
		})
		is.NoErr(err)
		rep := auditOK(t, e.svc)
		is.Equal(rep.Entries, n) // every entry read once
		is.Equal(rep.Books, 3)   // available, blocked, pix-network
	})
}

// corrupt rewrites a stored record directly through the store, behind the Service.
func corrupt[T any](t *testing.T, e ienv, collection, id string, change func(*T) []store.Index) {
	t.Helper()
	err := e.store.Update(ictx, func(tx store.Tx) error {
		r, err := tx.Get(collection, DefaultCompanyID, id)
		if err != nil {
			return err
		}
		var v T
		if err := decode(r, &v); err != nil {
			return err
		}
		if ix := change(&v); ix != nil {
			r.Indexes = ix
		}
		r2, err := encode(id, v, r.Keys, r.Indexes)
		if err != nil {
			return err
		}
		return tx.Put(collection, DefaultCompanyID, r2)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAudit_FindsCorruption(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T, e ienv) string {
		id := defaultAccountID(t, e.svc)
		if err := e.svc.FundAccountForTest(ictx, id, 1000); err != nil {
			t.Fatal(err)
		}
		if err := e.svc.HoldForTest(ictx, id, 300, "r1"); err != nil {
			t.Fatal(err)
		}
		auditOK(t, e.svc)
		return id
	}
	t.Run("BookBalance", func(t *testing.T) {
		eachStoreInternal(t, func(t *testing.T, e ienv) {
			is := is.New(t)
			id := setup(t, e)
			corrupt(t, e, collBooks, accountBook(id), func(b *book) []store.Index { b.Balance += 5; return nil })
			rep, err := e.svc.Audit(ictx)
			is.NoErr(err)
			is.True(!rep.OK()) // the corrupted balance is caught
			is.Equal(rep.Problems, []string{
				fmt.Sprintf("book %s: stored balance 705, journal says 700", accountBook(id)),
				"books sum to 5, not zero",
			})
			corrupt(t, e, collBooks, accountBook(id), func(b *book) []store.Index { b.Balance -= 5; return nil })
			auditOK(t, e.svc)
		})
	})
	t.Run("UnbalancedEntry", func(t *testing.T) {
		eachStoreInternal(t, func(t *testing.T, e ienv) {
			is := is.New(t)
			id := setup(t, e)
			corrupt(t, e, collJournal, "00000000000000000001", func(en *Entry) []store.Index {
				en.Postings[0].Amount--
				return nil
			})
			rep, err := e.svc.Audit(ictx)
			is.NoErr(err)
			is.Equal(rep.Problems, []string{
				"entry 00000000000000000001 (test.fund " + id + ") does not balance: postings sum to -1", // the entry
				"book system:pix-network: stored balance -1000, journal says -1001",                      // and the book it no longer explains
			})
		})
	})
	t.Run("Hold", func(t *testing.T) {
		eachStoreInternal(t, func(t *testing.T, e ienv) {
			is := is.New(t)
			id := setup(t, e)
			corrupt(t, e, collHolds, "r1", func(h *hold) []store.Index { h.Remaining = 200; return h.indexes() })
			rep, err := e.svc.Audit(ictx)
			is.NoErr(err)
			is.Equal(rep.Problems, []string{fmt.Sprintf("book %s: balance 300, open holds 200", blockedBook(id))}) // blocked must match the holds
		})
	})
	t.Run("LostBook", func(t *testing.T) {
		eachStoreInternal(t, func(t *testing.T, e ienv) {
			is := is.New(t)
			setup(t, e)
			err := e.store.Update(ictx, func(tx store.Tx) error { return tx.Delete(collBooks, DefaultCompanyID, bookPixNetwork) })
			is.NoErr(err)
			rep, err := e.svc.Audit(ictx)
			is.NoErr(err)
			is.Equal(rep.Problems, []string{
				"book system:pix-network: in the journal (balance -1000) but not stored", // a lost book
				"books sum to 1000, not zero",
			})
		})
	})
}

// TestLedger_Concurrent runs 32 goroutines of transfers between funded subaccounts while a
// reader checks every snapshot: no balance below zero, the total conserved.
func TestLedger_Concurrent(t *testing.T) {
	t.Parallel()
	const (
		subaccounts = 8
		funding     = 1000
		workers     = 32
		perWorker   = 20
	)
	eachStoreInternal(t, func(t *testing.T, e ienv) {
		is := is.New(t)
		keys := make([]string, subaccounts)
		for i := range keys {
			keys[i] = fmt.Sprintf("sub%d@example.com", i)
			_, _, err := e.svc.CreateSubaccount(ictx, CreateSubaccountParams{PixKey: keys[i], Name: keys[i]})
			is.NoErr(err)
			is.NoErr(e.svc.FundSubaccountForTest(ictx, keys[i], funding))
		}
		const total = subaccounts * funding

		var (
			writers  sync.WaitGroup
			wrote    = make(chan struct{}, 1) // a transfer committed since the last check
			done     = make(chan struct{})
			checks   int
			checkErr = make(chan error, 1)
			moved    sync.Map // correlationID -> value, transfers that succeeded
		)
		check := func() error {
			subs, _, err := e.svc.ListSubaccounts(ictx, ListParams{Limit: subaccounts})
			if err != nil {
				return err
			}
			var sum int64
			for _, s := range subs {
				if s.Balance < 0 {
					return fmt.Errorf("subaccount %s at %d", s.PixKey, s.Balance)
				}
				sum += s.Balance
			}
			if sum != total {
				return fmt.Errorf("subaccounts sum to %d, want %d", sum, total)
			}
			return nil
		}
		go func() {
			defer close(checkErr)
			for {
				select {
				case <-done:
					return
				case <-wrote:
				}
				checks++
				if err := check(); err != nil {
					checkErr <- err
					return
				}
			}
		}()
		errs := make(chan error, workers)
		for w := range workers {
			writers.Add(1)
			go func() {
				defer writers.Done()
				r := rand.New(rand.NewPCG(uint64(w), 1))
				for i := range perWorker {
					from, to := r.IntN(subaccounts), r.IntN(subaccounts-1)
					if to >= from {
						to++
					}
					cid := fmt.Sprintf("w%d-%d", w, i)
					v := int64(1 + r.IntN(400))
					_, err := e.svc.TransferBetweenSubaccounts(ictx, CreateSubaccountTransferParams{
						Value: v, FromPixKey: keys[from], ToPixKey: keys[to], CorrelationID: cid,
					})
					switch ErrorCode(err) {
					case "":
						moved.Store(cid, v)
						select {
						case wrote <- struct{}{}:
						default:
						}
					case EPRECONDITION: // not enough balance: refused whole
					default:
						errs <- err
						return
					}
				}
			}()
		}
		writers.Wait()
		close(done)
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if err, ok := <-checkErr; ok {
			t.Fatal(err)
		}
		is.NoErr(check()) // and after the last write
		is.True(checks > 0)

		rep := auditOK(t, e.svc)
		n := 0
		moved.Range(func(_, _ any) bool { n++; return true })
		is.True(n > 0)                                                 // some transfers went through
		is.Equal(rep.Entries, subaccounts+n)                           // one entry per funding and per transfer
		is.Equal(bookBalance(t, e.svc, bookPixNetwork), int64(-total)) // nothing left or entered the company
	})
}

func TestOptions_Rail(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	svc, err := New(memory.New(), Options{})
	is.NoErr(err)
	_, ok := svc.core.rail.(*SandboxRail)
	is.True(ok) // the sandbox rail by default
	custom := NewSandboxRail(nil, time.Minute)
	svc, err = New(memory.New(), Options{Rail: custom})
	is.NoErr(err)
	is.Equal(svc.core.rail, Rail(custom)) // a rail passed in is used
}
