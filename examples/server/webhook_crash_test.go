package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestCrash_WebhooksRedelivered runs the real server binary with a webhook on CHARGE_CREATED
// to a receiver on 127.0.0.1, creates 50 charges, and kills the process with SIGKILL while
// the receiver holds a delivery unanswered (after answering the first 10). Restarted on the
// same file, the server delivers every event: the receiver, which dedupes by webhook-id,
// has all 50, and the one the kill cut off came twice (at least once, never lost).
func TestCrash_WebhooksRedelivered(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills a server process")
	}
	is := is.New(t)
	bin, db := buildServer(t)

	const events, answered = 50, 10
	var mu sync.Mutex
	seen := map[string]int{} // webhook-id -> deliveries
	total := 0
	hold := make(chan struct{})    // closed after the kill: held deliveries answer then
	holding := make(chan struct{}) // closed when the first delivery is held
	all := make(chan struct{})     // closed when every event has arrived
	holdOnce, allOnce := sync.Once{}, sync.Once{}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var v struct{ Evento string }
		_ = json.Unmarshal(b, &v)
		if v.Evento == "teste_webhook" {
			return // the test call on create
		}
		mu.Lock()
		seen[r.Header.Get("webhook-id")]++
		total++
		n := len(seen)
		mu.Unlock()
		if n == events {
			allOnce.Do(func() { close(all) })
		}
		if n > answered {
			select {
			case <-hold:
			default:
				holdOnce.Do(func() { close(holding) })
				select {
				case <-hold:
				case <-r.Context().Done():
				}
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		}
	}))
	defer rcv.Close()

	base, appID, proc := startProcess(t, bin, db, true)
	code, _ := call(t, "POST", base+"/api/v1/webhook", appID,
		`{"webhook":{"name":"crash","url":"`+rcv.URL+`","event":"OPENPIX:CHARGE_CREATED","isActive":true}}`)
	is.Equal(code, http.StatusOK) // the webhook is registered (its test call answered)
	for i := range events {
		is.Equal(status(base, "POST", "/api/v1/charge", appID, fmt.Sprintf(`{"correlationID":"wh-%d","value":100}`, i)), http.StatusOK)
	}
	select {
	case <-holding:
	case <-time.After(time.Minute):
		t.Fatal("no delivery reached the receiver")
	}
	is.NoErr(proc.Process.Signal(syscall.SIGKILL)) // mid-delivery, nothing recorded for it
	proc.Wait()
	close(hold)

	_, _, proc = startProcess(t, bin, db, false)
	select {
	case <-all:
	case <-time.After(time.Minute):
		mu.Lock()
		t.Fatalf("after the restart only %d of %d events arrived", len(seen), events)
	}
	is.NoErr(proc.Process.Signal(syscall.SIGTERM))
	proc.Wait()
	mu.Lock()
	defer mu.Unlock()
	dups := 0
	for _, n := range seen {
		dups += n - 1
	}
	t.Logf("events %d, distinct deliveries %d, POSTs %d, duplicates %d", events, len(seen), total, dups)
	is.Equal(len(seen), events) // every event delivered
	is.True(dups >= 1)          // the one cut off by the kill came again
}
