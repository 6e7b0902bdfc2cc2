package httpadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// RequestInfo describes one request served, as Options.RequestLog logs it and
// Options.OnRequest receives it.
type RequestInfo struct {
	// ID is the request id: the caller's X-Request-Id when it is a sane one (1 to
	// maxRequestID letters, digits and "-_.:"), else one made here. It is answered in the
	// X-Request-Id header. Empty when Options.RequestLog is nil.
	ID     string
	Method string
	// Route is the pattern of routes.go that served the request ("GET /api/v1/charge/{id}"),
	// never the raw path, so that it has few values; "" when no route matched (a 404, a
	// 405, a request refused before routing).
	Route    string
	Status   int
	Duration time.Duration
}

// RequestIDHeader carries the request id both ways.
const RequestIDHeader = "X-Request-Id"

// maxRequestID is the longest incoming request id honoured.
const maxRequestID = 64

// requestLog is the outermost middleware when Options.RequestLog or Options.OnRequest is
// set: it times the request, learns its status and route, and logs one line (at Info:
// request_id, method, route, status, duration) and/or calls onRequest.
//
// It is on the hot path, so it does little: one small wrapper of the ResponseWriter, an id
// made from a per-process random prefix and a counter (no randomness per request), and
// one slog record handed to the handler. The route is read from r.Pattern after the
// handler ran: the mux sets it on the request it is given, which is this one, since
// nothing before the mux replaces the request.
func requestLog(log *slog.Logger, onRequest func(RequestInfo), next http.Handler) http.Handler {
	ids := newRequestIDs()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var id string
		if log != nil {
			id = r.Header.Get(RequestIDHeader)
			if !saneRequestID(id) {
				id = ids.next()
			}
			w.Header()[RequestIDHeader] = []string{id}
		}
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			// Also after a panic that recoverPanics let through (http.ErrAbortHandler): the
			// line is still written, with the status sent so far.
			end := time.Now()
			info := RequestInfo{ID: id, Method: r.Method, Route: r.Pattern, Status: sw.status(), Duration: end.Sub(start)}
			if h := logHandler(log); h != nil {
				// A record made here, as Logger.LogAttrs makes it but with no caller's
				// pc: LogAttrs walks the stack for one (runtime.Callers) on every line,
				// and the caller would be this middleware anyway.
				rec := slog.NewRecord(end, slog.LevelInfo, "request", 0)
				rec.AddAttrs(slog.String("request_id", info.ID), slog.String("method", info.Method), slog.String("route", info.Route),
					slog.Int("status", info.Status), slog.Duration("duration", info.Duration))
				_ = h.Handle(context.Background(), rec) // as LogAttrs: a handler's error is its own
			}
			if onRequest != nil {
				onRequest(info)
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// logHandler is log's handler when log is on at Info, else nil.
func logHandler(log *slog.Logger) slog.Handler {
	if log == nil {
		return nil
	}
	if h := log.Handler(); h.Enabled(context.Background(), slog.LevelInfo) {
		return h
	}
	return nil
}

// saneRequestID reports whether an incoming id may be echoed and logged: 1 to
// maxRequestID characters of [A-Za-z0-9-_.:], nothing that could forge a log line.
func saneRequestID(s string) bool {
	if s == "" || len(s) > maxRequestID {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// requestIDs makes request ids: a random prefix per handler, then a counter, so ids are
// unique across restarts without reading randomness per request.
type requestIDs struct {
	prefix string
	n      atomic.Uint64
}

func newRequestIDs() *requestIDs {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	return &requestIDs{prefix: hex.EncodeToString(b[:]) + "-"}
}

func (g *requestIDs) next() string {
	var buf [32]byte
	b := append(buf[:0], g.prefix...)
	b = strconv.AppendUint(b, g.n.Add(1), 36)
	return string(b)
}

// statusWriter remembers the status a handler sent.
type statusWriter struct {
	http.ResponseWriter
	code int // 0 until WriteHeader or Write
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 && code >= 200 { // 1xx are interim: the final status comes later
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// status is the status sent: 200 when the handler wrote nothing (net/http sends 200).
func (s *statusWriter) status() int {
	if s.code == 0 {
		return http.StatusOK
	}
	return s.code
}

// Unwrap lets http.ResponseController reach the underlying writer (Flush, deadlines).
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
