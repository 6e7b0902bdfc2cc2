package payments_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
	"github.com/pixfoundry/payments/store/postgres"
	"github.com/pixfoundry/payments/store/postgres/pgtest"
)

// callers runs fn b.N times in all from n goroutines and reports the store's retries per
// operation when it counts them.
func callers(b *testing.B, n int, st store.Store, fn func(i int64) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var before int64
	pg, _ := st.(*postgres.Store)
	if pg != nil {
		before = pg.Retries()
	}
	b.ResetTimer()
	for range n {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				if err := fn(i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if pg != nil {
		b.ReportMetric(float64(pg.Retries()-before)/float64(b.N), "retries/op")
	}
}

// durable are the stores that commit to disk: bolt (group commit, fsync), postgres
// (synchronous_commit as the server has it), postgres without the company gate, and two
// postgres stores on one database, as two server processes (the Services are made by
// the benchmark).
var durable = []struct {
	name string
	open func(b *testing.B) []store.Store
}{
	{"bolt", func(b *testing.B) []store.Store {
		s, err := bolt.Open(filepath.Join(b.TempDir(), "payments.db"))
		if err != nil {
			b.Fatal(err)
		}
		return []store.Store{s}
	}},
	{"postgres", func(b *testing.B) []store.Store { return openPostgres(b, 1, postgres.Options{}) }},
	{"postgres-nogate", func(b *testing.B) []store.Store { return openPostgres(b, 1, postgres.Options{NoCompanyGate: true}) }},
	{"postgres-2instances", func(b *testing.B) []store.Store { return openPostgres(b, 2, postgres.Options{}) }},
}

func openPostgres(b *testing.B, n int, opts postgres.Options) []store.Store {
	url := pgtest.URL(b)
	var out []store.Store
	for range n {
		s, err := postgres.OpenOptions(context.Background(), url, opts)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// BenchmarkCreateChargeDurable creates charges in one company from 1, 16 and 64 callers at
// once on each durable store; with two instances the callers alternate between them.
func BenchmarkCreateChargeDurable(b *testing.B) {
	for _, d := range durable {
		for _, n := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/callers=%d", d.name, n), func(b *testing.B) {
				stores := d.open(b)
				var svcs []*payments.Service
				for _, st := range stores {
					svcs = append(svcs, newEnv(b, st).svc)
				}
				callers(b, n, stores[0], func(i int64) error {
					_, err := svcs[int(i)%len(svcs)].CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprintf("order-%d", i), Value: 1990})
					return err
				})
			})
		}
	}
}

// BenchmarkCreateChargeCompanies creates charges from 16 callers spread over 1 or 16
// companies: the writes of one company share hot rows (the outbox counter, kept counts),
// those of different companies do not.
func BenchmarkCreateChargeCompanies(b *testing.B) {
	for _, d := range durable[:3] {
		for _, companies := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/companies=%d", d.name, companies), func(b *testing.B) {
				st := d.open(b)[0]
				e := newEnv(b, st)
				svcs := []*payments.Service{e.svc}
				for i := 1; i < companies; i++ {
					co, err := e.svc.CreateCompany(ctx, payments.CreateCompanyParams{Name: fmt.Sprint("Company ", i)})
					if err != nil {
						b.Fatal(err)
					}
					svc, err := e.svc.Company(ctx, co.ID)
					if err != nil {
						b.Fatal(err)
					}
					svcs = append(svcs, svc)
				}
				callers(b, 16, st, func(i int64) error {
					_, err := svcs[int(i)%len(svcs)].CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprintf("order-%d", i), Value: 1990})
					return err
				})
			})
		}
	}
}
