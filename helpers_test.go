package payments_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store"
	"github.com/pixfoundry/payments/store/bolt"
	"github.com/pixfoundry/payments/store/memory"
	"github.com/pixfoundry/payments/store/postgres"
	"github.com/pixfoundry/payments/store/postgres/pgtest"
	"github.com/pixfoundry/payments/store/storetest"
)

var ctx = context.Background()

// t0 is where every test clock starts.
var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// env is a Service under test with its clock and store.
type env struct {
	svc   *payments.Service
	clock *payments.ManualClock
	store store.Store
}

// stores are the drivers every Service test runs on.
var stores = []struct {
	name string
	open func(t testing.TB) store.Store
}{
	{"memory", func(t testing.TB) store.Store { return memory.New() }},
	{"bolt", func(t testing.TB) store.Store {
		s, err := bolt.Open(filepath.Join(t.TempDir(), "payments.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
	// rerun rolls back and re-runs every Update (see storetest.RerunStore): a Service
	// whose transaction functions keep state from one run to the next fails here.
	{"rerun", func(t testing.TB) store.Store { return storetest.Rerun(memory.New()) }},
	// postgres runs when PAYMENTS_POSTGRES_URL names a server (.ci/run sets it), each
	// test in a schema of its own; skipped otherwise.
	{"postgres", func(t testing.TB) store.Store {
		s, err := postgres.Open(context.Background(), pgtest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

// eachStore runs fn once per store driver, each on a fresh Service, the drivers in
// parallel: fn must not share state with the test that calls eachStore, which returns
// before fn runs.
func eachStore(t *testing.T, fn func(t *testing.T, e env)) {
	t.Helper()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			fn(t, newEnv(t, st.open(t)))
		})
	}
}

func newEnv(t testing.TB, st store.Store) env {
	t.Helper()
	clock := payments.NewManualClock(t0)
	svc, err := payments.New(st, payments.Options{Clock: clock, DefaultCompany: payments.CreateCompanyParams{
		Name: "Loja Exemplo", PixKey: "pix@loja.example.com", MerchantName: "Loja Exemplo", MerchantCity: "Sao Paulo",
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return env{svc: svc, clock: clock, store: st}
}
