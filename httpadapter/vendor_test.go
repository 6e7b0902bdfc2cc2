package httpadapter_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// TestRoutes_OtherVendor: a Service whose vendor is not openpix serves its routes under its
// own name and, since the SDKs and the spec build /openpix/... paths whatever the brand,
// under /openpix too: the public QR image, the sandbox, the /<vendor>/api/v1/webhook variant
// and the legacy /api/<vendor>/v1 prefix. The links it hands out use its own name.
func TestRoutes_OtherVendor(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s, _ := newOffsetClockServer(t, true, payments.Options{Vendor: "woovi"})
	c := s.createCharge(t, s.appID, `{"correlationID":"v1","value":100}`)
	is.True(strings.Contains(str(c, "qrCodeImage"), "/woovi/charge/brcode/image/")) // its own name in links
	for _, v := range []string{"woovi", "openpix"} {
		w := s.raw(t, "GET", "/"+v+"/charge/brcode/image/"+str(c, "paymentLinkID")+".png", "")
		is.Equal(w.Code, http.StatusOK) // the image under both names
		is.Equal(w.Header().Get("Content-Type"), "image/png")
		mustStatus(t, is, s.do(t, "GET", "/"+v+"/testing/clock", s.appID, ""), http.StatusOK)
		mustStatus(t, is, s.do(t, "GET", "/"+v+"/api/v1/webhook", s.appID, ""), http.StatusOK)
		mustStatus(t, is, s.do(t, "GET", "/api/"+v+"/v1/charge/v1", s.appID, ""), http.StatusOK)
	}
	mustStatus(t, is, s.do(t, "GET", "/openpix/testing?transactionID=v1", s.appID, ""), http.StatusOK) // pays it
	mustStatus(t, is, s.do(t, "GET", "/api/openpix/v1/charge", "", ""), http.StatusUnauthorized)       // behind auth like the rest
}
