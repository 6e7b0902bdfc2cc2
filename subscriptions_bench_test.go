package payments_test

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store"
)

// BenchmarkRunDue_12Months: 10,000 ACTIVE monthly subscriptions, the clock moved 12
// months, one pass: 120,000 charges generated, each period once. Only the pass is timed;
// each iteration sets up a fresh store (run with -benchtime=1x -count=N). cpu-µs/charge
// is the CPU time of the process during the pass per generated charge.
func BenchmarkRunDue_12Months(b *testing.B) {
	benchmarkDue12Months(b, func(e env, to time.Time) error {
		e.clock.Set(to)
		return e.svc.RunDue(ctx)
	})
}

// BenchmarkAdvanceClock_12Months is BenchmarkRunDue_12Months with the clock moved by
// AdvanceClock: a pass on each period's first moment and on each expiry, 24 in all, so
// the 120,000 charges are generated and also expired (with their events), as a year of
// running does.
func BenchmarkAdvanceClock_12Months(b *testing.B) {
	benchmarkDue12Months(b, func(e env, to time.Time) error {
		_, err := e.svc.AdvanceClock(ctx, e.clock, to.Sub(e.clock.Now()))
		return err
	})
}

// benchmarkDue12Months times move, which takes the clock from t0 to 12 months' periods
// later and does the work due, with 10,000 monthly subscriptions, on memory and bolt.
//
// On bolt it also reports floor-ms, measured in the same iteration: what bbolt itself
// takes to write as many records as the pass generated, each the size of a generated
// charge's record and of its CHARGE_CREATED event as the pass stored them, under
// time-ordered keys, in one transaction and without fsync, with no keys, no index
// entries and none of the Service's work (boltFloor). No design that stores each charge
// and its event in bbolt does the pass in less on the same machine.
func benchmarkDue12Months(b *testing.B, move func(e env, to time.Time) error) {
	const subs = 10_000
	for _, st := range stores[:2] { // memory and bolt
		b.Run(st.name, func(b *testing.B) {
			var cpu, floor time.Duration // of the passes; bbolt's floor
			for range b.N {
				b.StopTimer()
				e := newEnv(b, st.open(b))
				var wg sync.WaitGroup
				for g := range 32 {
					wg.Go(func() {
						for i := g; i < subs; i += 32 {
							createSubscription(b, e.svc, payments.CreateSubscriptionParams{CorrelationID: fmt.Sprint("s", i), Value: 1990})
						}
					})
				}
				wg.Wait()
				b.StartTimer()
				cpu0 := processCPU(b)
				if err := move(e, t0.AddDate(1, 0, 0).Add(-24*time.Hour)); err != nil { // Dec 5 .. Nov 5: 12 periods
					b.Fatal(err)
				}
				cpu += processCPU(b) - cpu0
				b.StopTimer()
				_, page, err := e.svc.ListCharges(ctx, payments.ChargeFilter{ListParams: payments.ListParams{Limit: 1}})
				if err != nil || page.TotalCount != 12*subs {
					b.Fatalf("%d charges, %v", page.TotalCount, err)
				}
				if st.name == "bolt" {
					floor += boltFloor(b, 12*subs, storedSizes(b, e, "charges", "events")...)
				}
				e.store.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/pass")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*12*subs), "cpu-µs/charge")
			if floor > 0 {
				b.ReportMetric(float64(floor.Milliseconds())/float64(b.N), "floor-ms")
			}
		})
	}
}

// storedSizes is the size of the first record (by creation) of each of the collections of
// e's company, as stored.
func storedSizes(b *testing.B, e env, colls ...string) []int {
	var sizes []int
	err := e.store.View(ctx, func(tx store.Tx) error {
		for _, coll := range colls {
			p, err := tx.List(coll, e.svc.CompanyID(), store.Query{Index: "all", Limit: 1, NoTotal: true})
			if err != nil {
				return err
			}
			if len(p.Records) == 0 {
				return fmt.Errorf("no record in %s", coll)
			}
			sizes = append(sizes, len(p.Records[0].Data))
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return sizes
}

// boltFloor is the time bbolt takes, in a new file, to write n groups of records of the
// given sizes under 16-byte time-ordered keys (appends), in one transaction without
// fsync: a lower bound for storing n such groups however they are indexed.
func boltFloor(b *testing.B, n int, sizes ...int) time.Duration {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "floor.db"), 0o600, &bolt.Options{NoSync: true, InitialMmapSize: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	values := make([][]byte, len(sizes))
	for i, size := range sizes {
		values[i] = make([]byte, size)
		for j := range values[i] {
			values[i][j] = 'a' + byte(j%26)
		}
	}
	start := time.Now()
	err = db.Update(func(tx *bolt.Tx) error {
		var buckets []*bolt.Bucket
		for i := range values {
			bk, err := tx.CreateBucket([]byte{'a' + byte(i)})
			if err != nil {
				return err
			}
			bk.FillPercent = 1 // appends: full pages
			buckets = append(buckets, bk)
		}
		for k := range n {
			key := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(k))
			key = binary.BigEndian.AppendUint64(key, uint64(k)*0x9e3779b97f4a7c15)
			for i, bk := range buckets {
				if err := bk.Put(key, values[i]); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}
