package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/postgres"
	"github.com/pixfoundry/payments/store/postgres/pgtest"
	"github.com/pixfoundry/payments/store/storetest"
)

func harness(opts postgres.Options) storetest.Harness {
	return storetest.Harness{
		Open: func(t *testing.T) store.Store {
			s, err := postgres.OpenOptions(context.Background(), pgtest.URL(t), opts)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Reopen: func(t *testing.T, s store.Store) store.Store {
			url := s.(*postgres.Store).URL()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2, err := postgres.OpenOptions(context.Background(), url, opts)
			if err != nil {
				t.Fatal(err)
			}
			return s2
		},
	}
}

func TestConformance(t *testing.T) {
	storetest.Run(t, harness(postgres.Options{}))
}

// TestConformanceNoGate runs the suite without the company gate: SERIALIZABLE and the
// retries alone keep the contract, the gate only schedules.
func TestConformanceNoGate(t *testing.T) {
	storetest.Run(t, harness(postgres.Options{NoCompanyGate: true}))
}

// TestOpenConcurrently opens one new database from several stores at once: the migrations
// run once and every store works.
func TestOpenConcurrently(t *testing.T) {
	is := is.New(t)
	url := pgtest.FreshURL(t) // an empty database: every Open races to migrate it
	const n = 4
	stores := make([]*postgres.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = postgres.Open(context.Background(), url)
		}()
	}
	wg.Wait()
	for i := range n {
		is.NoErr(errs[i]) // every concurrent Open succeeds
		defer stores[i].Close()
	}
	for i, s := range stores {
		err := s.Update(context.Background(), func(tx store.Tx) error {
			return tx.Insert("things", "co1", store.Record{ID: fmt.Sprint(i), Data: []byte("x")})
		})
		is.NoErr(err) // every store writes to the one schema
	}
	err := stores[0].View(context.Background(), func(tx store.Tx) error {
		p, err := tx.List("things", "co1", store.Query{Index: "none"})
		is.Equal(p.Total, 0)
		return err
	})
	is.NoErr(err)
}
