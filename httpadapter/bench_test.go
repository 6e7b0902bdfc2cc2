package httpadapter_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/httpadapter"
)

// BenchmarkHTTPCreateCharge is POST /api/v1/charge through the whole handler (auth,
// decoding, the Service on the memory store, encoding), without a network.
func BenchmarkHTTPCreateCharge(b *testing.B) {
	s := newServer(b, httpadapter.Options{})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r := httptest.NewRequest("POST", "/api/v1/charge", strings.NewReader(fmt.Sprintf(`{"correlationID":"c%d","value":1990,"comment":"Pedido"}`, i)))
		r.Header.Set("Authorization", s.appID)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkHTTPGetCharge is GET /api/v1/charge/{id} through the whole handler.
func BenchmarkHTTPGetCharge(b *testing.B) {
	s := newServer(b, httpadapter.Options{})
	if _, err := s.svc.CreateCharge(ctx, payments.CreateChargeParams{CorrelationID: "c1", Value: 1990}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("GET", "/api/v1/charge/c1", nil)
		r.Header.Set("Authorization", s.appID)
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkHTTPCreateChargeInvalid is the error path: a POST /api/v1/charge whose value is
// not a whole number of centavos, answered 400 naming the field.
func BenchmarkHTTPCreateChargeInvalid(b *testing.B) {
	s := newServer(b, httpadapter.Options{})
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/api/v1/charge", strings.NewReader(`{"correlationID":"c1","value":19.90}`))
		r.Header.Set("Authorization", s.appID)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, r)
		if w.Code != http.StatusBadRequest {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkHTTPUnauthorized is a GET with a wrong App ID, answered 401.
func BenchmarkHTTPUnauthorized(b *testing.B) {
	s := newServer(b, httpadapter.Options{})
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("GET", "/api/v1/charge/c1", nil)
		r.Header.Set("Authorization", "Q2xpZW50X0lkX3g6Q2xpZW50X1NlY3JldF95")
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}
