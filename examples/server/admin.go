package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
	"github.com/pixfoundry/payments/store/bolt"
)

// The operator listener (-admin-addr, off by default) serves what someone running the
// server needs and its API clients must not reach, on its own address:
//
//	GET /metrics        Prometheus text format (see newMetrics for the series)
//	GET /debug/pprof/   net/http/pprof: profiles of the running server
//	GET /backup         a consistent snapshot of the database while it runs: a bbolt file,
//	                    to save and start the server on (-db) to restore
//	GET /orders/stuck   the outgoing orders of every company the bank has not answered for
//	                    MaxSendFailures calls in a row (Service.ListStuckOrders), as JSON;
//	                    ?skip= and ?limit= page it
//
// It has no authentication: it must be bound to loopback (127.0.0.1:9090, [::1]:9090,
// localhost:9090) unless -admin-allow-remote says otherwise, e.g. behind a firewall.

// adminShutdown bounds the operator listener's shutdown: a backup in flight is cut off.
const adminShutdown = 5 * time.Second

// checkAdminAddr validates -admin-addr: host:port, and a loopback host unless remote
// access is allowed.
func checkAdminAddr(addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return badFlag("-admin-addr %q must be host:port, e.g. 127.0.0.1:9090", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return badFlag("-admin-addr %q: the port must be a number from 0 to 65535", addr)
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return badFlag("-admin-addr %q must be on loopback (e.g. 127.0.0.1:9090): the operator listener has no authentication; -admin-allow-remote permits another address", addr)
	}
	return nil
}

// metrics are the server's Prometheus series, on a registry of their own:
//
//	payments_http_requests_total{route,code}           requests by route pattern and status
//	payments_http_request_duration_seconds{route}      their latency
//	payments_store_commit_calls                        Update calls per bbolt group commit
//	payments_store_commit_duration_seconds             one group commit, transaction to disk
//	payments_store_commit_write_seconds                the part of it writing and syncing the file
//	payments_store_commit_written_bytes                the pages one group commit wrote
//	payments_webhook_attempts_total{outcome}           delivery attempts: delivered, retry
//	                                                   (failed, tried again), gave_up, disabled
//	payments_outbox_lag_seconds                        age of the oldest event owed to a webhook
//	payments_outbox_lag_events                         events after the owed webhooks' cursors
//	payments_outbox_lag_webhooks                       active webhooks with events owed
//	payments_bank_sandbox                              1 when the bank is the make-believe sandbox
//	payments_orders_stuck                              outgoing orders the bank has not answered
//	                                                   for Options.MaxSendFailures calls in a row
//
// (the outbox series are payments.Service.OutboxLag, read at each scrape), with the Go
// runtime's and the process's.
type metrics struct {
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	commitCalls   prometheus.Histogram
	commitLatency prometheus.Histogram
	commitWrite   prometheus.Histogram
	commitBytes   prometheus.Histogram
	attempts      *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payments_http_requests_total", Help: "API requests by route pattern (\"\" when none matched) and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "payments_http_request_duration_seconds", Help: "API request latency by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"route"}),
		commitCalls: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "payments_store_commit_calls", Help: "Update calls carried by one bbolt group commit.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 11), // 1 .. 1024 (bolt.MaxBatch is 1000)
		}),
		commitLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "payments_store_commit_duration_seconds", Help: "One bbolt group commit, from its transaction's start to its sync.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		commitWrite: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "payments_store_commit_write_seconds", Help: "The part of one bbolt group commit spent writing its pages and meta page to the file and syncing them (two fdatasyncs): the disk's share of payments_store_commit_duration_seconds.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		commitBytes: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "payments_store_commit_written_bytes", Help: "Bytes of pages one bbolt group commit wrote (every page a changed key touched, leaf to root), the meta page left out.",
			Buckets: prometheus.ExponentialBuckets(4096, 2, 13), // 4 KiB .. 16 MiB
		}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payments_webhook_attempts_total", Help: "Webhook delivery attempts by outcome: delivered, retry (failed, tried again later), gave_up (failed the last attempt), disabled (410 Gone).",
		}, []string{"outcome"}),
	}
	for _, o := range []string{"delivered", "retry", "gave_up", "disabled"} {
		m.attempts.WithLabelValues(o) // every outcome shows, at 0 until it happens
	}
	m.reg.MustRegister(m.requests, m.latency, m.commitCalls, m.commitLatency, m.commitWrite, m.commitBytes, m.attempts,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// onRequest is httpadapter.Options.OnRequest; nil without metrics.
func (m *metrics) onRequest() func(httpadapter.RequestInfo) {
	if m == nil {
		return nil
	}
	return func(ri httpadapter.RequestInfo) {
		m.requests.WithLabelValues(ri.Route, strconv.Itoa(ri.Status)).Inc()
		m.latency.WithLabelValues(ri.Route).Observe(ri.Duration.Seconds())
	}
}

// onCommit is bolt.Options.OnCommit; nil without metrics.
func (m *metrics) onCommit() func(bolt.CommitInfo) {
	if m == nil {
		return nil
	}
	return func(c bolt.CommitInfo) {
		m.commitCalls.Observe(float64(c.Calls))
		m.commitLatency.Observe(c.Duration.Seconds())
		m.commitWrite.Observe(c.Write.Seconds())
		m.commitBytes.Observe(float64(c.Written))
	}
}

// onWebhookAttempt is payments.Options.OnWebhookAttempt; nil without metrics.
func (m *metrics) onWebhookAttempt() func(payments.WebhookAttempt) {
	if m == nil {
		return nil
	}
	return func(a payments.WebhookAttempt) { m.attempts.WithLabelValues(a.Outcome).Inc() }
}

// outboxLagTimeout bounds the read of the outbox lag at a scrape.
const outboxLagTimeout = 5 * time.Second

// outboxCollector reads svc.OutboxLag at each scrape.
type outboxCollector struct {
	svc                  *payments.Service
	seconds, events, hks *prometheus.Desc
}

func newOutboxCollector(svc *payments.Service) *outboxCollector {
	return &outboxCollector{
		svc:     svc,
		seconds: prometheus.NewDesc("payments_outbox_lag_seconds", "Age of the oldest outbox event owed to an active webhook (0 when none is owed).", nil, nil),
		events:  prometheus.NewDesc("payments_outbox_lag_events", "Outbox events committed after the cursors of the webhooks with events owed, summed: an upper bound of the deliveries owed.", nil, nil),
		hks:     prometheus.NewDesc("payments_outbox_lag_webhooks", "Active webhooks with events owed (due now or waiting for a retry).", nil, nil),
	}
}

func (c *outboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.seconds
	ch <- c.events
	ch <- c.hks
}

func (c *outboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), outboxLagTimeout)
	defer cancel()
	lag, err := c.svc.OutboxLag(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.seconds, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.seconds, prometheus.GaugeValue, lag.Oldest.Seconds())
	ch <- prometheus.MustNewConstMetric(c.events, prometheus.GaugeValue, float64(lag.Events))
	ch <- prometheus.MustNewConstMetric(c.hks, prometheus.GaugeValue, float64(lag.Webhooks))
}

// bankCollector reports, at each scrape, whether the bank is the sandbox and how many
// outgoing orders are stuck (svc.CountStuckOrders).
type bankCollector struct {
	svc            *payments.Service
	sandbox, stuck *prometheus.Desc
}

func newBankCollector(svc *payments.Service) *bankCollector {
	return &bankCollector{
		svc:     svc,
		sandbox: prometheus.NewDesc("payments_bank_sandbox", "1 when the bank is the sandbox, whose money is make-believe; 0 for a real bank.", nil, nil),
		stuck:   prometheus.NewDesc("payments_orders_stuck", "Outgoing orders (payments, refunds, withdrawals) the bank has not answered for MaxSendFailures calls in a row; still retried.", nil, nil),
	}
}

func (c *bankCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.sandbox
	ch <- c.stuck
}

func (c *bankCollector) Collect(ch chan<- prometheus.Metric) {
	sandbox := 0.0
	if c.svc.Sandbox() {
		sandbox = 1
	}
	ch <- prometheus.MustNewConstMetric(c.sandbox, prometheus.GaugeValue, sandbox)
	ctx, cancel := context.WithTimeout(context.Background(), outboxLagTimeout)
	defer cancel()
	n, err := c.svc.CountStuckOrders(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.stuck, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.stuck, prometheus.GaugeValue, float64(n))
}

// loopbackOnly answers 421 to a request whose Host is not a loopback name or address. A
// listener on loopback is out of other machines' reach, but not of a web page the
// operator opens: a name the page's owner points at 127.0.0.1 (DNS rebinding) makes the
// browser send the page's requests, and hand it the answers, with that name as Host. The
// operator's own tools name the listener by loopback address or localhost.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
			http.Error(w, "the operator listener answers requests for localhost or a loopback address only (Host "+strconv.Quote(r.Host)+")", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// adminHandler is the operator listener's handler; args is the process's command line, as
// /debug/pprof/cmdline shows it (redacted).
func adminHandler(svc *payments.Service, m *metrics, rec *reconciler, log *slog.Logger, args []string) http.Handler {
	m.reg.MustRegister(newOutboxCollector(svc), newBankCollector(svc))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelError)}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.Handle("/debug/pprof/cmdline", handleCmdline(args))
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("GET /backup", handleBackup(svc, log))
	mux.Handle("GET /orders/stuck", handleStuckOrders(svc))
	mux.Handle("POST /psp/reconcile", handleReconcile(rec))
	return mux
}

// handleCmdline serves /debug/pprof/cmdline as net/http/pprof does, the arguments
// separated by NUL bytes, but redacted (redactArgs): a -db URL can carry the database's
// password, and the PSP's secrets can be flags too, which the operator listener must not
// show whoever reaches it, any more than the log does.
func handleCmdline(args []string) http.Handler {
	shown := strings.Join(redactArgs(args), "\x00")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, shown)
	})
}

// secretFlags are the flags whose values the command line never shows.
var secretFlags = map[string]bool{"psp-client-secret": true, "psp-webhook-secret": true}

// redactArgs returns args as the command line may be shown: every argument, and the
// value of every "-name=value", passes through redactDB, so that a -db URL (in either of
// the flag package's forms) and a PostgreSQL URL anywhere else lose their passwords; the
// value of every secret flag (secretFlags), "-name value" or "-name=value", with one dash
// or two, becomes "xxxxx". An argument in a secret's value position is also read as a
// flag of its own: the redaction can only hide more than the flag package would take as
// the value, never less.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	secretNext := false // the next argument is the value of a secret flag
	for i, a := range args {
		isValue := secretNext
		secretNext = false
		out[i] = redactDB(a)
		if isValue {
			out[i] = "xxxxx"
		}
		dashes := len(a) - len(strings.TrimLeft(a, "-"))
		if dashes < 1 || dashes > 2 || len(a) == dashes {
			continue // not a flag
		}
		name, value, hasValue := strings.Cut(a[dashes:], "=")
		switch {
		case !hasValue:
			secretNext = secretFlags[name]
		case isValue: // already hidden whole
		case secretFlags[name]:
			out[i] = a[:dashes] + name + "=xxxxx"
		default:
			out[i] = a[:dashes] + name + "=" + redactDB(value)
		}
	}
	return out
}

// handleStuckOrders answers GET /orders/stuck: {"orders":[...],"pageInfo":{...}}, longest
// stuck first; a bad skip or limit is a 400 naming it.
func handleStuckOrders(svc *payments.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p payments.ListParams
		for _, f := range []struct {
			name string
			v    *int
		}{{"skip", &p.Skip}, {"limit", &p.Limit}} {
			if s := r.URL.Query().Get(f.name); s != "" {
				n, err := strconv.Atoi(s)
				if err != nil {
					writeAdminJSON(w, http.StatusBadRequest, map[string]string{"error": f.name + " must be a whole number"})
					return
				}
				*f.v = n
			}
		}
		orders, page, err := svc.ListStuckOrders(r.Context(), p)
		if err != nil {
			status := http.StatusInternalServerError
			if payments.ErrorCode(err) == payments.EINVALID {
				status = http.StatusBadRequest
			}
			writeAdminJSON(w, status, map[string]string{"error": payments.ErrorMessage(err)})
			return
		}
		if orders == nil {
			orders = []payments.StuckOrder{}
		}
		writeAdminJSON(w, http.StatusOK, map[string]any{"orders": orders, "pageInfo": page})
	})
}

func writeAdminJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// handleBackup streams a snapshot of the database (Service.Backup: a bbolt file). A
// failure before the first byte is a 500 (501 for a store with no online backup); after
// it, the connection is cut so that the client sees a broken transfer, never a short file
// that looks whole.
func handleBackup(svc *payments.Service, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := "payments-" + time.Now().UTC().Format("20060102T150405Z") + ".db"
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		cw := &countingWriter{w: w}
		start := time.Now()
		if err := svc.Backup(r.Context(), cw); err != nil {
			log.Error("backup failed", "err", err, "bytes_sent", cw.n)
			if cw.n == 0 {
				w.Header().Del("Content-Disposition")
				status := http.StatusInternalServerError
				if payments.ErrorCode(err) == payments.ENOTIMPLEMENTED {
					status = http.StatusNotImplemented // PostgreSQL: its own tools back it up
				}
				http.Error(w, "backup failed: "+payments.ErrorMessage(err), status)
				return
			}
			panic(http.ErrAbortHandler)
		}
		log.Info("backup sent", "bytes", cw.n, "duration", time.Since(start))
	})
}

type countingWriter struct {
	w http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// startAdmin serves the operator listener on ln until stop is called.
func startAdmin(ln net.Listener, h http.Handler, log *slog.Logger) (stop func()) {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		// No WriteTimeout: a backup of a large database takes as long as it takes.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("operator listener failed", "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), adminShutdown)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
		<-done
	}
}

// listenAdmin opens the operator listener's socket, or returns nil when it is off.
func listenAdmin(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("operator listener: %w", err)
	}
	return ln, nil
}
