package httpadapter_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/httpadapter"
)

// logLine is one request line of the request log.
type logLine struct {
	Msg       string  `json:"msg"`
	RequestID string  `json:"request_id"`
	Method    string  `json:"method"`
	Route     string  `json:"route"`
	Status    int     `json:"status"`
	Duration  float64 `json:"duration"`
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var buf bytes.Buffer
	var mu sync.Mutex
	var seen []httpadapter.RequestInfo
	s := newServer(t, httpadapter.Options{
		RequestLog: slog.New(slog.NewJSONHandler(&buf, nil)),
		OnRequest: func(ri httpadapter.RequestInfo) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, ri)
		},
	})
	send := func(method, path, id string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("Authorization", s.appID)
		if id != "" {
			req.Header.Set(httpadapter.RequestIDHeader, id)
		}
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, req)
		return rec
	}
	cases := []struct {
		method, path, id string
		route            string
		status           int
	}{
		{"GET", "/health", "", "GET /health", 200},
		{"GET", "/api/v1/charge/nope", "abc-123.x:y_z", "GET /api/v1/charge/{id}", 400},
		{"GET", "/api/openpix/v1/charge?limit=2", "", "GET /api/openpix/v1/charge", 200},
		{"GET", "/no/such/route", "has space", "", 404},
		{"GET", "/api/v1/charge/x", strings.Repeat("a", 65), "GET /api/v1/charge/{id}", 400},
		{"DELETE", "/health", "", "", 405},
	}
	var ids []string
	for _, c := range cases {
		rec := send(c.method, c.path, c.id)
		is.Equal(rec.Code, c.status) // the route answered as usual
		ids = append(ids, rec.Header().Get(httpadapter.RequestIDHeader))
	}
	is.Equal(ids[1], "abc-123.x:y_z") // a sane incoming id is honoured
	for i, id := range ids {
		is.True(id != "")                                           // every answer carries an id
		is.True(id != cases[3].id && id != cases[4].id)             // an odd or long incoming one is replaced
		is.True(i == 0 || id != ids[i-1])                           // ids differ
		is.True(!strings.ContainsAny(id, " \n\"") && len(id) <= 64) // and are safe to log
	}

	var lines []logLine
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var ll logLine
		is.NoErr(json.Unmarshal([]byte(l), &ll))
		lines = append(lines, ll)
	}
	is.Equal(len(lines), len(cases)) // one line per request
	for i, c := range cases {
		l := lines[i]
		is.Equal(l.Msg, "request")
		is.Equal(l.RequestID, ids[i]) // the id answered is the id logged
		is.Equal(l.Method, c.method)
		is.Equal(l.Route, c.route) // the route pattern, not the raw path
		is.Equal(l.Status, c.status)
		is.True(l.Duration > 0)
		is.Equal(seen[i].Route, c.route) // OnRequest sees the same
		is.Equal(seen[i].Status, c.status)
	}
}

// A request log whose handler is off at Info writes no line; OnRequest still hears of the
// request, and the id is still answered.
func TestRequestLog_LevelAboveInfo(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var buf bytes.Buffer
	heard := 0
	s := newServer(t, httpadapter.Options{
		RequestLog: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})),
		OnRequest:  func(httpadapter.RequestInfo) { heard++ },
	})
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
	is.Equal(rec.Code, http.StatusOK)
	is.Equal(buf.Len(), 0)                                       // nothing logged
	is.Equal(heard, 1)                                           // OnRequest called
	is.True(rec.Header().Get(httpadapter.RequestIDHeader) != "") // the id answered
}

// Without RequestLog nothing is logged and no id is set.
func TestRequestLog_Off(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServer(t, httpadapter.Options{})
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
	is.Equal(rec.Code, http.StatusOK)
	is.Equal(rec.Header().Get(httpadapter.RequestIDHeader), "") // off by default
}

// BenchmarkRequestLog is the middleware's cost on a cheap route: off, logging to
// io.Discard (the middleware and slog's formatting), and to a file (plus a write each).
func BenchmarkRequestLog(b *testing.B) {
	for _, name := range []string{"off", "discard", "file"} {
		opts := httpadapter.Options{}
		switch name {
		case "discard":
			opts.RequestLog = slog.New(slog.NewTextHandler(io.Discard, nil))
		case "file":
			f, err := os.Create(filepath.Join(b.TempDir(), "requests.log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			opts.RequestLog = slog.New(slog.NewTextHandler(f, nil))
		}
		b.Run(name, func(b *testing.B) {
			s := newServer(b, opts)
			req := httptest.NewRequest("GET", "/health", nil)
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				s.h.ServeHTTP(rec, req)
			}
		})
	}
}
