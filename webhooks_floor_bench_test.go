package payments_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store/bolt"
	"github.com/pixfoundry/payments/webhook"
	"go.etcd.io/bbolt"
)

// floorCharges is how many charges BenchmarkWebhookDeliveryFloor pays, and so how many
// deliveries it times.
const floorCharges = 2000

// floorSigners is how many goroutines sign at once for the signing floor: the machine
// the benchmark is written for has two cores.
const floorSigners = 2

// BenchmarkWebhookDeliveryFloor: webhook deliveries against the signing floor, in one run.
// On a bolt store (durable, as deployed) with the sandbox rail, one webhook on
// CHARGE_COMPLETED sent by httpadapter.NewWebhookSender to a loopback receiver that
// answers 200 at once. floorCharges charges are created and paid through the sandbox with
// the timer stopped; then ServeWebhooks runs, as Service.Run runs it, and the timer runs
// until the receiver has had every delivery, each attempt is recorded and the outbox lag
// is 0. Every delivery needs an RSA-2048 signature of its own body, so the signing floor
// is what the same webhook.Signer signs per second on floorSigners goroutines, bodies of
// the size delivered, each body new (no cached signature).
//
// Metrics: deliveries/s; cpu-µs/delivery (the process's user+system CPU over the timed
// part, receiver included); commits/delivery (bolt group commits); write-µs/commit (the
// time a commit spends writing and syncing its pages, wall clock); written-B/delivery
// (the bytes of pages the commits wrote: the webhookSent audit's rewrite of each
// delivery's Pix transaction is most of it); floor-sig/s and
// cpu-µs/sig for the floor; ratio, deliveries/s over floor-sig/s.
//
// A delivery also goes over HTTP, which the signing floor leaves out: the sending floor
// (sendingFloor) signs and sends bodies of the same size to a receiver as this one,
// DefaultWebhookInFlight at once, with nothing stored. floor-send/s and cpu-µs/send are
// its figures, ratio-send deliveries/s over floor-send/s: what claiming, recording and
// committing leave of what signing and sending alone allow.
//
// A delivery that survives a crash must also keep, at the least, that the receiver took
// it. The recording floor (floor-rec/s, cpu-µs/rec) is the sending floor keeping one
// attempt record per delivery in a bbolt file, synced, in group commits (floorRecorder),
// with no claim, audit or webhook state: rec/sig is what that durable record alone leaves
// of the signing floor, ratio-rec deliveries/s over floor-rec/s what the service adds.
func BenchmarkWebhookDeliveryFloor(b *testing.B) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	var delivered, floor, sends, recs, cpuDelivery, cpuSig, cpuSend, cpuRec, commits, writeUs, written float64
	b.StopTimer()
	for range b.N {
		r := runDeliveryFloor(b, key)
		delivered += r.perSec
		cpuDelivery += r.cpuPer
		commits += r.commitsPer
		writeUs += r.writePer
		written += r.writtenPer
		fs, fc := signingFloor(b, key, r.bodySize)
		floor += fs
		cpuSig += fc
		ss, sc := sendingFloor(b, key, r.bodySize, nil)
		sends += ss
		cpuSend += sc
		rs, rc := sendingFloor(b, key, r.bodySize, newFloorRecorder(b))
		recs += rs
		cpuRec += rc
	}
	n := float64(b.N)
	b.ReportMetric(delivered/n, "deliveries/s")
	b.ReportMetric(cpuDelivery/n, "cpu-µs/delivery")
	b.ReportMetric(commits/n, "commits/delivery")
	b.ReportMetric(writeUs/n, "write-µs/commit")
	b.ReportMetric(written/n, "written-B/delivery")
	b.ReportMetric(floor/n, "floor-sig/s")
	b.ReportMetric(cpuSig/n, "cpu-µs/sig")
	b.ReportMetric(delivered/floor, "ratio")
	b.ReportMetric(sends/n, "floor-send/s")
	b.ReportMetric(cpuSend/n, "cpu-µs/send")
	b.ReportMetric(delivered/sends, "ratio-send")
	b.ReportMetric(recs/n, "floor-rec/s")
	b.ReportMetric(cpuRec/n, "cpu-µs/rec")
	b.ReportMetric(delivered/recs, "ratio-rec")
	b.ReportMetric(recs/floor, "rec/sig")
}

// floorRun is what one delivery run measured.
type floorRun struct {
	perSec, cpuPer, commitsPer float64
	writePer                   float64 // µs a commit spent writing and syncing, on average
	writtenPer                 float64 // bytes of pages the commits wrote, per delivery
	bodySize                   int
}

// runDeliveryFloor sets up the store, webhook and paid charges with the timer stopped,
// then times ServeWebhooks delivering them all.
func runDeliveryFloor(b *testing.B, key *rsa.PrivateKey) floorRun {
	b.Helper()
	rcv := newFloorReceiver()
	defer rcv.Close()

	var commits commitTotals
	committed := make(chan struct{}, 1)
	st, err := bolt.OpenWith(filepath.Join(b.TempDir(), "payments.db"), bolt.Options{OnCommit: func(ci bolt.CommitInfo) {
		commits.add(ci)
		select {
		case committed <- struct{}{}:
		default:
		}
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var attempts atomic.Int64
	svc, err := payments.New(st, payments.Options{Rail: payments.NewSandboxRail(nil, 0), WebhookSigningKey: key,
		WebhookSender: httpadapter.NewWebhookSender(httpadapter.WebhookSenderOptions{AllowPrivate: true}),
		OnWebhookAttempt: func(a payments.WebhookAttempt) {
			if a.Outcome != "delivered" {
				b.Errorf("attempt of event %d: %s %s", a.Seq, a.Outcome, a.Error)
			}
			attempts.Add(1)
		}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.CreateWebhook(ctx, payments.CreateWebhookParams{Name: "floor", URL: rcv.URL, Event: svc.EventName(payments.EventChargeCompleted)}); err != nil {
		b.Fatal(err)
	}
	for i := range floorCharges {
		c, err := svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: fmt.Sprint("floor-", i), Value: 1990})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := svc.ReceiveChargePix(ctx, c.CorrelationID, payments.ReceivePixParams{EndToEndID: svc.NewSandboxEndToEndID(),
			Payer: &payments.Payer{Name: "Pagador Sandbox", TaxID: "52998224725"}}); err != nil {
			b.Fatal(err)
		}
	}
	if lag, err := svc.OutboxLag(ctx); err != nil || lag.Webhooks != 1 {
		b.Fatalf("before delivery: lag %+v, %v; want the webhook owed", lag, err)
	}

	before := commits.get()
	cpu0 := processCPU(b)
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	stopProfile := profileDeliveries(b)
	start := time.Now()
	b.StartTimer()
	go func() {
		defer close(served)
		svc.ServeWebhooks(serveCtx, payments.DefaultWebhookPoll)
	}()
	<-rcv.all
	for { // every attempt recorded, and the cursor past the events after the last one
		if attempts.Load() >= floorCharges {
			lag, err := svc.OutboxLag(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if lag.Events == 0 {
				break
			}
		}
		<-committed
	}
	took := time.Since(start)
	b.StopTimer()
	cpu := processCPU(b) - cpu0
	stopProfile()
	after := commits.get()
	stop()
	<-served
	if n := rcv.seen.Load(); n != floorCharges {
		b.Fatalf("receiver saw %d deliveries, want %d", n, floorCharges)
	}
	n := after.commits - before.commits
	return floorRun{perSec: floorCharges / took.Seconds(), cpuPer: micros(cpu) / floorCharges,
		commitsPer: float64(n) / floorCharges, writePer: micros(after.write-before.write) / float64(max(n, 1)),
		writtenPer: float64(after.written-before.written) / floorCharges,
		bodySize:   int(rcv.bodySize.Load())}
}

// floorReceiver is the loopback receiver of BenchmarkWebhookDeliveryFloor: it answers 200
// at once to a signed delivery and 400 to one without its signature headers, and counts
// the deliveries (not the test calls CreateWebhook makes), closing all at the
// floorCharges-th.
type floorReceiver struct {
	*httptest.Server
	seen, bodySize atomic.Int64
	all            chan struct{}
}

func newFloorReceiver() *floorReceiver {
	rcv := &floorReceiver{all: make(chan struct{})}
	rcv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		if r.Header.Get(webhook.HeaderID) == "" || r.Header.Get(webhook.HeaderRSA) == "" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if strings.HasPrefix(r.Header.Get(webhook.HeaderID), "test_") {
			return // CreateWebhook's test call
		}
		rcv.bodySize.Store(n)
		if rcv.seen.Add(1) == floorCharges {
			close(rcv.all)
		}
	}))
	return rcv
}

// signingFloor is how many deliveries of size-byte bodies key's webhook.Signer signs per
// second on floorSigners goroutines, each body new, and the CPU per signature.
func signingFloor(b *testing.B, key *rsa.PrivateKey, size int) (perSec, cpuPer float64) {
	b.Helper()
	signer := webhook.NewSigner(key, 0)
	perSec, cpuPer = floorLoop(b, floorSigners, size, nil, func(d webhook.Delivery) error {
		_, err := signer.Headers(d)
		return err
	})
	if n := signer.RSASignatures(); n != floorCharges {
		b.Fatalf("signer made %d RSA signatures, want %d (one per body)", n, floorCharges)
	}
	return perSec, cpuPer
}

// sendingFloor is the least a delivery does with no store: what floorCharges deliveries of
// size-byte bodies, each body new, signed by key's webhook.Signer and sent by
// httpadapter.NewWebhookSender to a receiver as the benchmark's, give per second, with
// DefaultWebhookInFlight of them at once (the deliveries' own bound for one webhook), and
// the CPU per delivery, the receiver's included. No claim, no attempt recorded, no commit.
//
// With a recorder (the recording floor), each delivery the receiver took is also kept as
// its attempt record (floorRecorder), and the time runs until the last of them is
// committed.
func sendingFloor(b *testing.B, key *rsa.PrivateKey, size int, rec *floorRecorder) (perSec, cpuPer float64) {
	b.Helper()
	rcv := newFloorReceiver()
	defer rcv.Close()
	signer := webhook.NewSigner(key, 0)
	sender := httpadapter.NewWebhookSender(httpadapter.WebhookSenderOptions{AllowPrivate: true})
	var wait func() error
	if rec != nil {
		wait = rec.close
	}
	perSec, cpuPer = floorLoop(b, payments.DefaultWebhookInFlight, size, wait, func(d webhook.Delivery) error {
		start := time.Now()
		h, err := signer.Headers(d)
		if err != nil {
			return err
		}
		sendCtx, cancel := context.WithTimeout(ctx, payments.DefaultWebhookTimeout)
		defer cancel()
		res, err := sender.SendWebhook(sendCtx, payments.WebhookRequest{URL: rcv.URL, Header: h, Body: d.Body})
		if err == nil && res.Status != http.StatusOK {
			err = fmt.Errorf("receiver answered %d", res.Status)
		}
		if err == nil && rec != nil {
			rec.record(d, res.Status, time.Since(start))
		}
		return err
	})
	if n := rcv.seen.Load(); n != floorCharges {
		b.Fatalf("receiver saw %d deliveries, want %d", n, floorCharges)
	}
	return perSec, cpuPer
}

// floorLoop runs do on goroutines goroutines until it has had floorCharges deliveries,
// each with a size-byte body of its own, then wait when it is not nil, and returns how
// many it did per second and the process's CPU per delivery.
func floorLoop(b *testing.B, goroutines, size int, wait func() error, do func(webhook.Delivery) error) (perSec, cpuPer float64) {
	b.Helper()
	bodies := make([][]byte, floorCharges)
	for i := range bodies {
		body := make([]byte, size)
		for j := range body {
			body[j] = 'a' + byte(j%26)
		}
		copy(body, fmt.Sprintf(`{"n":%d}`, i)) // each body differs
		bodies[i] = body
	}
	var next atomic.Int64
	errs := make([]error, goroutines)
	var wg sync.WaitGroup
	cpu0 := processCPU(b)
	start := time.Now()
	for g := range goroutines {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < floorCharges; i = next.Add(1) - 1 {
				err := do(webhook.Delivery{ID: fmt.Sprint("msg_", i), At: start, Secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0", Body: bodies[i]})
				if err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if wait != nil {
		if err := wait(); err != nil {
			b.Fatal(err)
		}
	}
	took := time.Since(start)
	cpu := processCPU(b) - cpu0
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return floorCharges / took.Seconds(), micros(cpu) / floorCharges
}

// floorProfileEnv names a file to which BenchmarkWebhookDeliveryFloor writes a CPU profile
// of its first timed delivery part alone (run without -cpuprofile, which profiles the
// setup and the floor as well); floorTraceEnv names one for an execution trace of it
// instead, which shows what a CPU profile cannot: when the cores stood idle and what the
// goroutines waited for (go tool trace -pprof=syscall, or the trace viewer).
const (
	floorProfileEnv = "WEBHOOK_FLOOR_CPUPROFILE"
	floorTraceEnv   = "WEBHOOK_FLOOR_TRACE"
)

var floorProfiled atomic.Bool

// profileDeliveries starts the CPU profile or the trace floorProfileEnv or floorTraceEnv
// asks for, once per process, and returns what stops it.
func profileDeliveries(b *testing.B) (stop func()) {
	path, traced := os.Getenv(floorTraceEnv), true
	if path == "" {
		path, traced = os.Getenv(floorProfileEnv), false
	}
	if path == "" || !floorProfiled.CompareAndSwap(false, true) {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	start, end := pprof.StartCPUProfile, pprof.StopCPUProfile
	if traced {
		start, end = trace.Start, trace.Stop
	}
	if err := start(f); err != nil { // -cpuprofile or -trace is on already
		b.Logf("%s: %v", path, err)
		f.Close()
		return func() {}
	}
	return func() {
		end()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// floorRecorder is the recording floor's store: the attempt record of each delivery
// (payments.WebhookAttempt with ids of the service's length, encoded as the store keeps
// it, under the event's number) put in a bbolt file by one writer, floorBatch records a
// commit, synced as bbolt syncs by default. The senders do not wait for the commits.
type floorRecorder struct {
	in   chan payments.WebhookAttempt
	done chan error
}

func newFloorRecorder(b *testing.B) *floorRecorder {
	b.Helper()
	db, err := bbolt.Open(filepath.Join(b.TempDir(), "attempts.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	r := &floorRecorder{in: make(chan payments.WebhookAttempt, floorCharges), done: make(chan error, 1)}
	go func() {
		n, err := r.write(db)
		if err == nil && n != floorCharges {
			err = fmt.Errorf("recording floor: %d records committed, want %d", n, floorCharges)
		}
		r.done <- errors.Join(err, db.Close())
	}()
	return r
}

// floorBatch is the records a commit of the recording floor keeps: a window of sends
// (DefaultWebhookInFlight). A writer that committed whatever had come in whenever it was
// free made groups only as large as what came in during a commit, against the service's
// window (about one commit per 15 deliveries), and was slower than the service at times:
// no floor.
const floorBatch = payments.DefaultWebhookInFlight

// write commits what came in, floorBatch records at a time (the last batch when in is
// closed), until in is closed and drained, and returns how many records it committed.
func (r *floorRecorder) write(db *bbolt.DB) (int, error) {
	n := 0
	batch := make([]payments.WebhookAttempt, 0, floorBatch)
	for open := true; open; {
		batch = batch[:0]
		for len(batch) < floorBatch {
			a, ok := <-r.in
			if !ok {
				open = false
				break
			}
			batch = append(batch, a)
		}
		if len(batch) == 0 {
			break
		}
		err := db.Update(func(tx *bbolt.Tx) error {
			bk, err := tx.CreateBucketIfNotExists([]byte("attempts"))
			if err != nil {
				return err
			}
			bk.FillPercent = 0.9 // keys in order
			for _, a := range batch {
				v, err := json.Marshal(a)
				if err != nil {
					return err
				}
				if err := bk.Put(binary.BigEndian.AppendUint64(nil, a.Seq), v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return n, err
		}
		n += len(batch)
	}
	return n, nil
}

// record hands the attempt of delivery d to the writer; it does not wait for its commit.
func (r *floorRecorder) record(d webhook.Delivery, status int, took time.Duration) {
	seq, _ := strconv.ParseUint(strings.TrimPrefix(d.ID, "msg_"), 10, 64)
	r.in <- payments.WebhookAttempt{ID: fmt.Sprintf("%024x", seq), WebhookID: "0123456789abcdef01234567", Seq: seq, Event: "OPENPIX:CHARGE_COMPLETED",
		Attempt: 1, Time: time.Now(), Status: status, Duration: took, Outcome: "delivered"}
}

// close waits for every record handed over to be committed.
func (r *floorRecorder) close() error {
	close(r.in)
	return <-r.done
}
