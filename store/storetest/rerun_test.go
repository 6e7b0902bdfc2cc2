package storetest_test

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/memory"
	"github.com/pixfoundry/payments/store/storetest"
)

// TestRerun_Conformance runs the suite through a RerunStore: the wrapper is a store, and
// the suite's own transaction functions may run twice.
func TestRerun_Conformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T) store.Store { return storetest.Rerun(memory.New()) },
	})
}

func TestRerun(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	rs := storetest.Rerun(memory.New())
	defer rs.Close()
	insertRec := func(tx store.Tx, id string) error {
		return tx.Insert("things", "co1", store.Record{ID: id, Indexes: []store.Index{{Name: "all", Sort: id}}})
	}
	total := func(tx store.Tx) int {
		page, err := tx.List("things", "co1", store.Query{Index: "all"})
		is.NoErr(err)
		return page.Total
	}
	var runs []int // records each run saw
	hooked := false
	rs.BeforeRerun(func() {
		hooked = true
		err := rs.View(ctx, func(tx store.Tx) error {
			is.Equal(total(tx), 0) // the first run was rolled back
			return nil
		})
		is.NoErr(err)
		is.NoErr(rs.Update(ctx, func(tx store.Tx) error { return insertRec(tx, "theirs") })) // another writer commits
	})
	err := rs.Update(ctx, func(tx store.Tx) error {
		runs = append(runs, total(tx)) // kept across runs on purpose: the test counts them
		return insertRec(tx, "mine")
	})
	is.NoErr(err)
	is.True(hooked)             // the hook ran
	is.Equal(runs, []int{0, 1}) // the function ran twice; the second run saw the other writer
	err = rs.View(ctx, func(tx store.Tx) error {
		is.Equal(total(tx), 2) // the second run committed once, next to the other writer
		return nil
	})
	is.NoErr(err)

	hooked = false
	errBoom := errors.New("boom")
	calls := 0
	err = rs.Update(ctx, func(tx store.Tx) error {
		calls++
		if calls == 1 {
			return errBoom // the first run's result is dropped
		}
		return nil
	})
	is.NoErr(err)    // the second run's result is the Update's
	is.True(!hooked) // a hook runs once
	is.Equal(calls, 2)
	err = rs.Update(ctx, func(tx store.Tx) error { return errBoom })
	is.True(errors.Is(err, errBoom)) // a failing function fails the Update
}
