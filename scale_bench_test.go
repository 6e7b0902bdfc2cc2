package payments

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pixfoundry/payments/store"
)

// Scale benchmarks: reads at 10k charges and, on demand, at 1M, on bolt. The target
// is that no figure at 1M is more than 2× its figure at 10k: get and list cost grows with
// the page, not with the data.
//
//	go test -run '^$' -bench Scale -count 5 .                                  # 10k
//	PAYMENTS_SCALE=10000,1000000 go test -run '^$' -bench Scale -count 5 -timeout 60m .
//
// PAYMENTS_SCALE lists the sizes (charges), default 10000. Each size is seeded once into a
// bbolt file under os.TempDir, named by the size and a hash of the code that writes it (see
// sourceHash: a change there seeds afresh, otherwise runs reuse it): seeding 1M charges
// takes minutes, reading them microseconds. Every sub-benchmark reports the file's size
// (file-MB) and the process's resident memory after its run (rss-MB, from /proc: every
// size's file is mapped, so it covers the pages read so far of all of them).
//
// The data: n charges created 1 ms apart, through the charge's own transaction function
// (scaleSeedBatch per Update instead of one each, which is what makes seeding fast); every
// fourth expires after 15 minutes and is recorded EXPIRED by ExpireCharges, the rest stay
// ACTIVE, so the status filter selects three quarters.
func BenchmarkScale(b *testing.B) {
	sizes, err := scaleSizes(os.Getenv("PAYMENTS_SCALE"))
	if err != nil {
		b.Fatal(err)
	}
	// Every size is open at once and each read runs at every size back to back
	// (BenchmarkScale/GetByID/charges=10000, then .../charges=1000000): on a shared, noisy
	// machine the figures compared are taken as close together as they can be.
	sets := make([]*scaleSet, len(sizes))
	for i, n := range sizes {
		if sets[i], err = openScaleSet(n); err != nil {
			b.Fatal(err)
		}
		defer sets[i].svc.Close()
	}
	for _, op := range scaleOps {
		b.Run(op.name, func(b *testing.B) {
			for _, set := range sets {
				b.Run("charges="+strconv.Itoa(set.n), func(b *testing.B) {
					run := op.run(set)
					for i := range op.warm { // the pages it reads, in memory: see below
						if err := run(i); err != nil {
							b.Fatal(err)
						}
					}
					faults := majorFaults()
					b.ReportAllocs()
					for i := 0; b.Loop(); i++ {
						if err := run(i); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(majorFaults()-faults)/float64(b.N), "majflt/op")
					b.ReportMetric(float64(set.fileSize)/(1<<20), "file-MB")
					b.ReportMetric(rssMB(), "rss-MB")
				})
			}
		})
	}
}

// scaleSet is one seeded size, open, with what the benchmarks pick from.
type scaleSet struct {
	n           int
	svc         *Service
	fileSize    int64
	corrs, ids  []string     // a random sample: correlationIDs and globalIDs
	recordIDs   []string     // the same charges' record ids, the store's keys
	rangeFilter ChargeFilter // scaleRange charges' worth of time from the middle
}

func openScaleSet(n int) (*scaleSet, error) {
	ctx := context.Background()
	path, err := scaleFile(ctx, n)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	// The clock stands after the last charge, past the short charges' expiry.
	svc, err := Open(path, Options{Clock: NewManualClock(scaleNow(n))})
	if err != nil {
		return nil, err
	}
	set := &scaleSet{n: n, svc: svc, fileSize: fi.Size()}
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	for range scaleSample {
		corr := fmt.Sprintf("scale-%d", rng.IntN(n))
		c, err := svc.GetCharge(ctx, corr)
		if err != nil {
			svc.Close()
			return nil, err
		}
		set.corrs = append(set.corrs, corr)
		set.ids = append(set.ids, base64.StdEncoding.EncodeToString([]byte("Charge:"+c.ID)))
		set.recordIDs = append(set.recordIDs, c.ID)
	}
	mid := scaleStart.Add(time.Duration(n/2) * time.Millisecond)
	set.rangeFilter = ChargeFilter{Start: mid, End: mid.Add(scaleRange*time.Millisecond - time.Nanosecond), ListParams: ListParams{Limit: scalePage}}
	return set, nil
}

// scaleOps are the reads measured; run(set) returns one iteration's work. Each runs warm
// times before it is timed, which reads every page it will read into memory: the figures
// are of warm reads. The 1M file (7 GB) does not stay in this machine's page cache whole,
// and a page read from disk costs more than the read itself (GetByID at 1M without the
// warm-up: 254 µs a get over 20,000 gets, of which 38 µs CPU; with it, 72 µs, median of 8
// on the same loaded machine), so without the warm-up the figure measures the disk.
// majflt/op reports the page faults that still went to disk while timed.
var scaleOps = []struct {
	name string
	warm int
	run  func(set *scaleSet) func(i int) error
}{
	{"GetByID", scaleSample, func(set *scaleSet) func(int) error {
		return func(i int) error {
			_, err := set.svc.GetCharge(context.Background(), set.ids[i%len(set.ids)])
			return err
		}
	}},
	{"GetByCorrelationID", scaleSample, func(set *scaleSet) func(int) error {
		return func(i int) error {
			_, err := set.svc.GetCharge(context.Background(), set.corrs[i%len(set.corrs)])
			return err
		}
	}},
	// The floor of the two gets above, in the same run: the store's own look-ups of the
	// same charges in a read transaction, the record's bytes copied out (as an answer
	// must read them), with no decoding, no presenting and none of GetCharge's tries of
	// other keys. By correlationID that is two descents, the unique key's tree then the
	// records' tree; by record id, one.
	{"StoreGetByCorrelationID", scaleSample, func(set *scaleSet) func(int) error {
		return storeGet(set, func(t *txn, i int) (store.Record, error) {
			return t.tx.GetByKey(collCharges, t.company, correlationKey(set.corrs[i%len(set.corrs)]))
		})
	}},
	{"StoreGetByID", scaleSample, func(set *scaleSet) func(int) error {
		return storeGet(set, func(t *txn, i int) (store.Record, error) {
			return t.tx.Get(collCharges, t.company, set.recordIDs[i%len(set.recordIDs)])
		})
	}},
	{"ListActiveFirstPage", 2, func(set *scaleSet) func(int) error {
		return listScale(set, ChargeFilter{Status: ChargeActive}, scalePage, -1)
	}},
	{"ListActiveDeepPage", 2, func(set *scaleSet) func(int) error {
		return listScale(set, ChargeFilter{Status: ChargeActive, ListParams: ListParams{Skip: scaleDeepSkip}}, scalePage, -1)
	}},
	{"ListDateRange", 2, func(set *scaleSet) func(int) error {
		return listScale(set, set.rangeFilter, scalePage, scaleRange)
	}},
	{"CountActive", 2, func(set *scaleSet) func(int) error {
		return listScale(set, ChargeFilter{Status: ChargeActive, ListParams: ListParams{Limit: 1}}, 1, set.n-(set.n+3)/4)
	}},
}

// storeGet is a read of the store floor: in a read transaction, the record look finds for
// the i-th charge, its bytes copied out.
func storeGet(set *scaleSet, look func(t *txn, i int) (store.Record, error)) func(int) error {
	var buf []byte
	return func(i int) error {
		return set.svc.view(context.Background(), func(t *txn) error {
			r, err := look(t, i)
			buf = append(buf[:0], r.Data...)
			return err
		})
	}
}

// listScale lists f and checks the page's length and, unless total is -1, the count.
func listScale(set *scaleSet, f ChargeFilter, want, total int) func(int) error {
	return func(int) error {
		cs, page, err := set.svc.ListCharges(context.Background(), f)
		switch {
		case err != nil:
			return err
		case len(cs) != want:
			return fmt.Errorf("got %d charges of %d, want %d", len(cs), page.TotalCount, want)
		case total >= 0 && page.TotalCount != total:
			return fmt.Errorf("counted %d charges, want %d", page.TotalCount, total)
		}
		return nil
	}
}

// scaleStart is when the first seeded charge is created.
var scaleStart = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

const (
	scaleSeedBatch = 2000 // charges per seeding transaction
	scaleSample    = 1024 // charges the get benchmarks pick from
	scaleDeepSkip  = 5000 // the deep page's skip: half the 10k set, the same at every size
	scalePage      = 100  // the list page size (DefaultLimit)
	scaleRange     = 1000 // charges in the date range of the range benchmark
)

func scaleSizes(s string) ([]int, error) {
	if s == "" {
		return []int{10_000}, nil
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2*scaleDeepSkip {
			return nil, fmt.Errorf("PAYMENTS_SCALE: %q is not a number of charges of at least %d", f, 2*scaleDeepSkip)
		}
		out = append(out, n)
	}
	return out, nil
}

func scaleNow(n int) time.Time {
	return scaleStart.Add(time.Duration(n)*time.Millisecond + time.Hour)
}

// scaleFile returns the seeded file for n charges, seeding it on first use.
func scaleFile(ctx context.Context, n int) (string, error) {
	version, err := sourceHash()
	if err != nil {
		return "", err
	}
	prefix := fmt.Sprintf("payments-scale-%d-", n)
	path := filepath.Join(os.TempDir(), prefix+version+".db")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	// Files of an older build: gone, they are large.
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*.db"))
	for _, f := range old {
		os.Remove(f)
	}
	tmp := path + ".seeding"
	os.Remove(tmp)
	if err := seedScale(ctx, tmp, n); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	debug.FreeOSMemory() // seeding's garbage is not the reader's resident memory
	return path, nil
}

// seedScale creates n charges in the file at path (see BenchmarkScale).
func seedScale(ctx context.Context, path string, n int) error {
	clock := NewManualClock(scaleStart)
	svc, err := Open(path, Options{Clock: clock})
	if err != nil {
		return err
	}
	defer svc.Close()
	for lo := 0; lo < n; lo += scaleSeedBatch {
		hi := min(n, lo+scaleSeedBatch)
		err := svc.update(ctx, func(t *txn) error {
			for i := lo; i < hi; i++ {
				t.now = scaleStart.Add(time.Duration(i) * time.Millisecond)
				p := CreateChargeParams{CorrelationID: fmt.Sprintf("scale-%d", i), Value: int64(1000 + i%500), Comment: "Pedido", ExpiresIn: MaxChargeExpiresIn}
				if i%4 == 0 {
					p.ExpiresIn = MinChargeExpiresIn
				}
				if _, err := t.createCharge(p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seeding charges %d to %d: %w", lo, hi, err)
		}
	}
	clock.Set(scaleNow(n))
	expired, err := svc.ExpireCharges(ctx)
	if err != nil {
		return err
	}
	if want := (n + 3) / 4; expired != want {
		return fmt.Errorf("seeding expired %d charges, want %d", expired, want)
	}
	return nil
}

// sourceHash names the code that makes a seeded file: the module's non-test Go sources
// outside the adapters and examples (the domain, the stores, brcode). Seeded files are
// reused only by the same code, across runs and builds. The sources are found where this
// file was compiled from, not in the working directory: a test binary run from elsewhere
// (bench/load.sh runs one from the repository's root) found none there, and every build's
// hash was the same.
func sourceHash() (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("scale: no source path to hash the seeding code by")
	}
	root := filepath.Dir(self)
	h := sha256.New()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "httpadapter", "examples", "compat", "bench", "testdata":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", rel, len(b))
		h.Write(b)
		files++
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("scale: hashing the seeding code: %w", err)
	}
	if files == 0 {
		return "", fmt.Errorf("scale: no Go sources in %s to hash the seeding code by", root)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// majorFaults is the process's page faults that read from disk so far (/proc/self/stat
// majflt), or 0 where /proc has none.
func majorFaults() int64 {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses and may hold spaces.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 10 {
		return 0
	}
	n, _ := strconv.ParseInt(f[9], 10, 64) // majflt, field 12 of stat(5)
	return n
}

// rssMB is the process's resident memory (VmRSS) in MiB, or 0 where /proc has no such line.
func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err == nil {
				return float64(kb) / 1024
			}
		}
	}
	return 0
}
