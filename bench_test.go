package payments_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/bolt"
	"go.etcd.io/bbolt"
)

// eachStoreB runs a benchmark once per store driver, each on a fresh Service.
func eachStoreB(b *testing.B, fn func(b *testing.B, e env)) {
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) { fn(b, newEnv(b, st.open(b))) })
	}
}

func BenchmarkCreateCustomer(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{
				Name: "Bench", Email: "bench@example.com", CorrelationID: fmt.Sprintf("c%d", i),
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkGetCustomer(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		const n = 1000
		for i := range n {
			if _, err := e.svc.CreateCustomer(ctx, payments.CreateCustomerParams{
				Name: "Bench", Email: "bench@example.com", CorrelationID: fmt.Sprintf("c%d", i),
			}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := e.svc.GetCustomer(ctx, fmt.Sprintf("c%d", i%n)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkCreateCharge(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{
				CorrelationID: fmt.Sprintf("order-%d", i), Value: 1990, Comment: "Pedido",
				Customer: &payments.CreateCustomerParams{Name: "Ana", TaxID: "52998224725"},
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkGetCharge(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		const n = 1000
		for i := range n {
			if _, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprintf("order-%d", i), Value: 1990}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := e.svc.GetCharge(ctx, fmt.Sprintf("order-%d", i%n)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCreateChargeParallel creates charges from 32 goroutines at once: on bolt,
// group commit carries many of them in one commit.
func BenchmarkCreateChargeParallel(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		var n atomic.Int64
		b.ReportAllocs()
		b.SetParallelism(16) // 16 x GOMAXPROCS goroutines
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprintf("order-%d", n.Add(1)), Value: 1990})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkReceivePix pays a static QR code: one transaction, one ledger entry, one event.
func BenchmarkReceivePix(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		q, err := e.svc.CreatePixQRCode(ctx, payments.CreatePixQRCodeParams{Name: "Caixa"})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: fmt.Sprintf("E99999999202611221200%011d", i), Value: 1000, TxID: q.Identifier})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPayCharge pays ACTIVE charges with a customer (ReceiveChargePix): the Pix, the
// charge's change to COMPLETED (its status index entries move), the ledger entry and the
// events. Each charge is created with the timer stopped.
func BenchmarkPayCharge(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			c, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprintf("o%d", i), Value: 1990,
				Customer: &payments.CreateCustomerParams{Name: "Ana", TaxID: "52998224725", Email: "ana@example.com"}})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			_, _, err = e.svc.ReceiveChargePix(ctx, c.CorrelationID, payments.ReceivePixParams{EndToEndID: fmt.Sprintf("E99999999202611221200%011d", i)})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRefund refunds 1 centavo of a received Pix: the hold, the rail (sandbox, settling
// at once) and the settlement, two store transactions in all.
func BenchmarkRefund(b *testing.B) {
	eachStoreB(b, func(b *testing.B, e env) {
		x, err := e.svc.ReceivePix(ctx, payments.ReceivePixParams{EndToEndID: "E99999999202611221200BENCHMARK1", Value: 900_000_000})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, err := e.svc.CreateRefund(ctx, payments.CreateRefundParams{TransactionEndToEndID: x.EndToEndID, CorrelationID: fmt.Sprintf("r%d", i), Value: 1})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCreateChargeCallers is the durable write table of issue 12: CreateCharge from
// 1, 16, 64 and 256 concurrent callers on bolt with group commit ("bolt"), against plain
// bbolt with one commit per call ("bolt-plain", the baseline) and bbolt without fsync
// ("bolt-nosync", the ceiling the disk does not bound). It reports charges per second and
// the median latency of one call and, for the group-committing drivers, what their
// commits did per charge (bolt.CommitInfo): calls/commit, the bytes of pages written
// (written-B/op) and the time writing and syncing them took (disk-µs/op), the part of
// the writer's time per charge that the disk decides.
func BenchmarkCreateChargeCallers(b *testing.B) {
	drivers := []struct {
		name string
		opts bolt.Options
	}{
		{"bolt", bolt.Options{}},
		{"bolt-plain", bolt.Options{Unbatched: true}},
		{"bolt-nosync", bolt.Options{NoSync: true}},
	}
	for _, d := range drivers {
		for _, callers := range []int{1, 16, 64, 256} {
			b.Run(fmt.Sprintf("%s/callers=%d", d.name, callers), func(b *testing.B) {
				var commits commitTotals
				opts := d.opts
				opts.OnCommit = commits.add
				st, err := bolt.OpenWith(filepath.Join(b.TempDir(), "payments.db"), opts)
				if err != nil {
					b.Fatal(err)
				}
				e := newEnv(b, st)
				before := commits.get()
				benchCallers(b, callers, func(i int64) error {
					_, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "order-" + strconv.FormatInt(i, 10), Value: 1990})
					return err
				})
				commits.report(b, before)
			})
		}
	}
	for _, callers := range []int{1, 16, 64, 256} {
		b.Run(fmt.Sprintf("bbolt-update/callers=%d", callers), func(b *testing.B) {
			benchPlainBbolt(b, callers)
		})
	}
}

// benchPlainBbolt is the yardstick of issue 31's in-process row: plain bbolt (go.etcd.io/bbolt,
// default options, fsync on) with each call one db.Update putting one 600-byte record
// under a new key, so one commit per call, from callers goroutines. It is what an
// embedder writing each record in its own transaction gets; CreateCharge on the group
// committing store ("bolt") is compared with it at the same callers, in the same run.
func benchPlainBbolt(b *testing.B, callers int) {
	db, err := bbolt.Open(filepath.Join(b.TempDir(), "plain.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	bucket := []byte("records")
	if err := db.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucket(bucket)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	record := make([]byte, 600)
	for i := range record {
		record[i] = byte('a' + i%26)
	}
	benchCallers(b, callers, func(i int64) error {
		return db.Update(func(tx *bbolt.Tx) error {
			return tx.Bucket(bucket).Put([]byte("order-"+strconv.FormatInt(i, 10)), record)
		})
	})
}

// BenchmarkCreateChargeConflicts is CreateCharge from 64 callers on bolt where every other
// call reuses a taken correlationID (a client retrying without return_existing): the
// refusals must not slow the others down. A refusal writes nothing, so its batch goes on
// without a rollback (store/bolt group.go); before, each one rolled its batch back.
func BenchmarkCreateChargeConflicts(b *testing.B) {
	st, err := bolt.OpenWith(filepath.Join(b.TempDir(), "payments.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e := newEnv(b, st)
	if _, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "taken", Value: 1990}); err != nil {
		b.Fatal(err)
	}
	benchCallers(b, 64, func(i int64) error {
		corr := "order-" + strconv.FormatInt(i, 10)
		if i%2 == 0 {
			corr = "taken"
		}
		_, err := e.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: corr, Value: 1990})
		if corr == "taken" && payments.ErrorCode(err) == payments.ECONFLICT {
			return nil // refused, as it should be
		}
		return err
	})
}

// benchCallers runs b.N calls of fn from callers goroutines and reports ops/s, the
// median latency of a call (p50-ms) and the CPU time of the whole process per call
// (cpu-µs/op: user and system, every goroutine, GC included), which depends less on what
// else the machine runs than ops/s does.
func benchCallers(b *testing.B, callers int, fn func(i int64) error) {
	b.ReportAllocs()
	var next atomic.Int64
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := processCPU(b)
	start := time.Now()
	for range callers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t := time.Now()
				if err := fn(i); err != nil {
					b.Error(err)
					return
				}
				lat[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := processCPU(b) - cpu0
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

// commitTotals adds up the bolt.CommitInfo of a store's commits (unbatched stores report
// none).
type commitTotals struct {
	mu  sync.Mutex
	sum commitSum
}

type commitSum struct {
	commits, calls, written int64
	write                   time.Duration
}

func (c *commitTotals) add(ci bolt.CommitInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sum.commits++
	c.sum.calls += int64(ci.Calls)
	c.sum.written += ci.Written
	c.sum.write += ci.Write
}

func (c *commitTotals) get() commitSum {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sum
}

// report reports the commits since before, per call.
func (c *commitTotals) report(b *testing.B, before commitSum) {
	now := c.get()
	commits, calls := now.commits-before.commits, now.calls-before.calls
	if commits == 0 || calls == 0 {
		return
	}
	b.ReportMetric(float64(calls)/float64(commits), "calls/commit")
	b.ReportMetric(float64(now.written-before.written)/float64(calls), "written-B/op")
	b.ReportMetric(float64((now.write-before.write).Microseconds())/float64(calls), "disk-µs/op")
}

// processCPU is the user and system CPU time this process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
