package payments

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store/memory"
)

// replayed is a record created once per correlationID, for TestReplay.
type replayed struct {
	ID    string `json:"-"`
	Value int64  `json:"value"`
}

// replay returns the record a correlationID names, with its id, when the request is the
// same again; refuses it, on correlationID with the caller's message, when it is not (or
// always, without same); and names nothing for a correlationID not used, or none.
func TestReplay(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	const coll = "replay_test"
	setID := func(r *replayed, id string) { r.ID = id }
	sameValue := func(v int64) func(replayed) bool { return func(r replayed) bool { return r.Value == v } }
	svc, err := New(memory.New(), Options{})
	is.NoErr(err)
	is.NoErr(svc.update(ctx, func(t *txn) error {
		return t.insert(coll, "r1", "thing", replayed{Value: 100}, []string{correlationKey("order-1")}, nil)
	}))
	run := func(cid string, setID func(*replayed, string), same func(replayed) bool, differs string, args ...any) (r replayed, ok bool, err error) {
		verr := svc.view(ctx, func(t *txn) error {
			r, ok, err = replay(t, coll, "thing", cid, setID, same, differs, args...)
			return nil
		})
		is.NoErr(verr) // the read transaction itself
		return r, ok, err
	}

	t.Run("Same", func(t *testing.T) {
		is := is.New(t)
		r, ok, err := run("order-1", setID, sameValue(100), "never %q", "order-1")
		is.NoErr(err)
		is.True(ok)                                 // a retry
		is.Equal(r, replayed{ID: "r1", Value: 100}) // with its id
	})
	t.Run("BodyID", func(t *testing.T) {
		is := is.New(t)
		r, ok, err := run("order-1", nil, sameValue(100), "never")
		is.NoErr(err)
		is.True(ok)
		is.Equal(r.ID, "") // no setID: the id is the body's
	})
	t.Run("ErrConflict", func(t *testing.T) {
		is := is.New(t)
		r, ok, err := run("order-1", setID, sameValue(200), "a different thing with correlationID %q already exists", "order-1")
		is.Equal(ErrorCode(err), ECONFLICT)
		is.Equal(ErrorField(err), "correlationID")
		is.Equal(ErrorMessage(err), `a different thing with correlationID "order-1" already exists`)
		is.True(!ok)
		is.Equal(r, replayed{}) // nothing of the other record
	})
	t.Run("ErrUsedOnce", func(t *testing.T) {
		is := is.New(t)
		_, ok, err := run("order-1", nil, nil, "Já existe um com o correlationID fornecido")
		is.Equal(ErrorCode(err), ECONFLICT) // without same, any record is a conflict
		is.Equal(ErrorMessage(err), "Já existe um com o correlationID fornecido")
		is.True(!ok)
	})
	t.Run("New", func(t *testing.T) {
		is := is.New(t)
		for _, cid := range []string{"order-2", ""} {
			r, ok, err := run(cid, setID, nil, "never")
			is.NoErr(err)
			is.True(!ok) // nothing under it: the caller creates
			is.Equal(r, replayed{})
		}
	})
}
