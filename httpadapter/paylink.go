package httpadapter

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pixfoundry/payments"
)

// The payment link page: what a charge's or static QR code's paymentLinkUrl opens.
//
//	GET  /pay/{paymentLinkID}           the page (HTML); unknown or deleted: a 404 page
//	GET  /pay/{paymentLinkID}/status    its status now (JSON), which the page polls
//	POST /pay/{paymentLinkID}/simulate  sandbox only: pays it (JSON), for the page's button
//
// All three are public, as the link is: the payer has no App ID. They show what
// payments.Service.PaymentLink returns (the merchant name, the amount, the comment, the BR
// Code, the status and expiry) and nothing else, and only for the exact paymentLinkID, a
// random UUID known to those the company gave the link to.
//
// The page is Portuguese unless the browser prefers English (Accept-Language, see
// pageLanguage), and is one HTML document with its CSS and script inline (embedded in the
// binary, paylink/), under a Content-Security-Policy that allows nothing else but the QR
// image and the status route of this origin. The URLs the page names (its QR image, status
// and simulate routes) are relative to the page's own (see pageRelative), so the page works
// wherever the handler is mounted: at the root, under a prefix with http.StripPrefix, or
// behind a proxy that forwards a path prefix.
//
// Simulate exists only when Options.Sandbox is on. It needs no App ID, by design: the page
// is public and must not hold one. What it can do is bounded by the link: it pays only the
// charge (or fixed-value static QR code) the link is for, its amount due now, once (a paid
// or expired charge is refused), from the sandbox's fictitious payer, through
// payments.Service.PayPaymentLink, with everything a received Pix causes. A production
// server (Sandbox off) does not register the route: POST answers 404.

//go:embed paylink/page.html paylink/paylink.css paylink/paylink.js
var payLinkFiles embed.FS

var (
	payLinkTemplates = template.Must(template.ParseFS(payLinkFiles, "paylink/page.html"))
	payLinkCSS       = template.CSS(mustRead("paylink/paylink.css"))
	payLinkJS        = template.JS(mustRead("paylink/paylink.js"))
)

func mustRead(name string) string {
	b, err := payLinkFiles.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// payPath is the path of the payment page of paymentLinkID.
func payPath(paymentLinkID string) string { return "/pay/" + url.PathEscape(paymentLinkID) }

// qrImagePrefix is the path of the public QR images of vendor, up to the file name.
func qrImagePrefix(vendor string) string { return "/" + vendor + "/charge/brcode/image/" }

// PaymentLinkURL is the URL of the payment page of paymentLinkID on a server whose public
// base URL is base (e.g. "https://pix.example.com"; "" makes it a path): what a charge's
// paymentLinkUrl holds when the Service serves through this adapter. A program that uses
// the library without the adapter builds its links with it.
func PaymentLinkURL(base, paymentLinkID string) string {
	return strings.TrimRight(base, "/") + payPath(paymentLinkID)
}

// QRCodeImageURL is the URL of the public QR image PNG of paymentLinkID on a server whose
// public base URL is base and vendor name is vendor (payments.Service.Vendor): what a
// charge's qrCodeImage holds when the Service serves through this adapter.
func QRCodeImageURL(base, vendor, paymentLinkID string) string {
	return strings.TrimRight(base, "/") + qrImagePrefix(vendor) + url.PathEscape(paymentLinkID) + ".png"
}

// links are the payments.Links New installs: URLs of this adapter's routes under its
// Options.BaseURL.
type links struct{ base, vendor string }

func (l links) PaymentLinkURL(id string) string { return PaymentLinkURL(l.base, id) }
func (l links) QRCodeImageURL(id string) string { return QRCodeImageURL(l.base, l.vendor, id) }

// payLinkImageSize is the size of the QR image on the page, in pixels: sharp at twice the
// 264 CSS pixels the page shows it at.
const payLinkImageSize = 600

// pageData is what page.html renders.
type pageData struct {
	T     pageText
	Nonce string
	CSS   template.CSS
	JS    template.JS
	Link  payments.PaymentLink
	// ValueText is the amount shown large: what paying takes now (an OVERDUE charge's amount
	// due today, with its discount, fines and interest: its BR Code carries no amount, so
	// the payer types this one), the amount paid once paid, a static QR code's value, or
	// "any amount" for a code without one.
	ValueText   string
	DueDateText string
	// AmountDueText is what paying takes now (ValueText for a charge); OriginalText the
	// charge's value, shown beside it for an OVERDUE charge when the two differ.
	AmountDueText, OriginalText string
	StatusText                  string
	DoneNote                    string // under a final status
	StatusClass                 string
	TimeLeftText                string
	ExpiresIn                   string // whole seconds left, "" for a static QR code
	ImageURL                    string
	StatusURL                   string
	SimulateURL                 string // "" outside the sandbox
}

// handlePayLinkPage: GET /pay/{paymentLinkID} → 200 text/html, the payment page; an
// unknown or deleted link → 404 text/html, the not-found page.
func handlePayLinkPage(svc *payments.Service, opts Options) http.Handler {
	vendor := svc.Vendor()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := pageLanguage(r.Header.Get("Accept-Language"))
		id := r.PathValue("paymentLinkID")
		l, err := svc.PaymentLink(r.Context(), id)
		if payments.ErrorCode(err) == payments.ENOTFOUND {
			writePage(w, r, opts.Logger, http.StatusNotFound, "notfound", pageData{T: t, CSS: payLinkCSS})
			return
		} else if err != nil {
			writeError(w, r, opts.Logger, err)
			return
		}
		d := pageData{
			T: t, CSS: payLinkCSS, JS: payLinkJS, Link: l,
			ValueText:     formatBRL(l.Value),
			AmountDueText: formatBRL(l.AmountDue),
			OriginalText:  formatBRL(l.Value),
			StatusText:    t.status(l.Status),
			DoneNote:      t.doneNote(l.Status),
			StatusClass:   strings.ToLower(string(l.Status)),
			StatusURL:     pageRelative(l.ID, "/status"),
		}
		if l.Status == payments.PaymentLinkWaiting { // a paid or expired charge's code is not shown
			d.ImageURL = ".." + qrImagePrefix(vendor) + url.PathEscape(l.ID) + ".png?size=" + strconv.Itoa(payLinkImageSize)
		}
		if l.Kind == payments.PaymentLinkCharge {
			d.ValueText = d.AmountDueText
		}
		if l.Kind == payments.PaymentLinkQRCode && l.Value == 0 {
			d.ValueText = t.AnyAmount
		}
		if l.DueDate != nil {
			d.DueDateText = t.date(*l.DueDate)
		}
		if l.Kind == payments.PaymentLinkCharge {
			left := secondsLeft(l)
			d.ExpiresIn = strconv.FormatInt(left, 10)
			d.TimeLeftText = formatTimeLeft(left, t.Days)
		}
		if opts.Sandbox && canSimulate(l) {
			d.SimulateURL = pageRelative(l.ID, "/simulate")
		}
		writePage(w, r, opts.Logger, http.StatusOK, "page", d)
	})
}

// pageRelative is the URL of the route under the page of paymentLinkID (rest is "/status"
// or "/simulate"), relative to the page's own URL, <mount>/pay/<paymentLinkID>: the
// browser resolves "./<paymentLinkID><rest>" against it. The page's links are all relative
// (its image is "../<vendor>/charge/brcode/image/...") so that it works wherever the
// handler is mounted (http.StripPrefix on a host's mux, a proxy that forwards a path
// prefix) with no setting: Options.BaseURL makes the links records carry, not these. The
// "./" keeps an ID with a colon from reading as a URL scheme.
func pageRelative(paymentLinkID, rest string) string {
	return "./" + url.PathEscape(paymentLinkID) + rest
}

// canSimulate reports whether the sandbox's button can pay l: a waiting charge, or a
// static QR code with a fixed value.
func canSimulate(l payments.PaymentLink) bool {
	return l.Status == payments.PaymentLinkWaiting && (l.Kind == payments.PaymentLinkCharge || l.Value > 0)
}

// secondsLeft is the whole seconds from the read to l's expiry, never negative.
func secondsLeft(l payments.PaymentLink) int64 {
	return max(0, int64(l.ExpiresAt.Sub(l.Now)/time.Second))
}

// writePage renders the template name with d and writes it with status, under a
// Content-Security-Policy that lets the page's own inline style and script (by nonce),
// its QR image and its status route, and nothing else, run or load.
func writePage(w http.ResponseWriter, r *http.Request, log *slog.Logger, status int, name string, d pageData) {
	d.Nonce = newNonce()
	var buf bytes.Buffer
	if err := payLinkTemplates.ExecuteTemplate(&buf, name, d); err != nil {
		writeError(w, r, log, err)
		return
	}
	w = pageWriter(w)
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	h.Set("Cache-Control", "no-store")
	h.Set("Vary", "Accept-Language")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; connect-src 'self'; "+
		"style-src 'nonce-"+d.Nonce+"'; script-src 'nonce-"+d.Nonce+"'; "+
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.WriteHeader(status)
	w.Write(buf.Bytes()) // a failed write means the client left
}

// pageWriter is the writer under jsonMuxErrors' guard, which would replace an HTML 404
// (the not-found page) with JSON: the page routes answer HTML on purpose.
func pageWriter(w http.ResponseWriter) http.ResponseWriter {
	if g, ok := w.(*jsonGuard); ok {
		return g.ResponseWriter
	}
	return w
}

// newNonce is a fresh Content-Security-Policy nonce.
func newNonce() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// payLinkStatusBody is the answer of the status and simulate routes.
type payLinkStatusBody struct {
	Status        payments.PaymentLinkStatus `json:"status"`        // WAITING, PAID or EXPIRED
	AmountDue     int64                      `json:"amountDue"`     // centavos (see payments.PaymentLink)
	AmountDueText string                     `json:"amountDueText"` // "R$ 1.234,56"
	ExpiresIn     *int64                     `json:"expiresIn,omitempty"`
	PaidAt        *time.Time                 `json:"paidAt,omitempty"`
}

func statusBody(l payments.PaymentLink) payLinkStatusBody {
	b := payLinkStatusBody{Status: l.Status, AmountDue: l.AmountDue, AmountDueText: formatBRL(l.AmountDue), PaidAt: l.PaidAt}
	if l.Kind == payments.PaymentLinkCharge {
		left := secondsLeft(l)
		b.ExpiresIn = &left
	}
	return b
}

// handlePayLinkStatus: GET /pay/{paymentLinkID}/status → 200 {status, amountDue,
// amountDueText, expiresIn (seconds left, charges only), paidAt}; an unknown or deleted
// link → 404 {error}.
func handlePayLinkStatus(svc *payments.Service, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l, err := svc.PaymentLink(r.Context(), r.PathValue("paymentLinkID"))
		if err != nil {
			writeErrorLookup(w, r, log, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		encode(w, http.StatusOK, statusBody(l))
	})
}

// handlePayLinkSimulate: POST /pay/{paymentLinkID}/simulate (sandbox only, no body) pays
// the link as the sandbox's payer (see the top of this file) → 200 the status body after
// the payment; 400 {error} for a charge already paid or expired or a QR code without a
// fixed value; 404 {error} for an unknown link; 403 {error} for a request another site's
// page sent (its Origin is not this server's).
func handlePayLinkSimulate(svc *payments.Service, base string, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r, base) {
			encode(w, http.StatusForbidden, errorBody{Error: "simulate is for this server's own payment page"})
			return
		}
		id := r.PathValue("paymentLinkID")
		_, err := svc.PayPaymentLink(r.Context(), id, payments.ReceivePixParams{
			EndToEndID: svc.NewSandboxEndToEndID(), InfoPagador: sandboxInfoPagador,
			Payer: &payments.Payer{Name: sandboxPayerName, TaxID: sandboxPayerTaxID},
		})
		if err != nil {
			writeErrorLookup(w, r, log, err)
			return
		}
		l, err := svc.PaymentLink(r.Context(), id)
		if err != nil {
			writeErrorLookup(w, r, log, err)
			return
		}
		encode(w, http.StatusOK, statusBody(l))
	})
}

// sameOrigin reports whether r carries no Origin (not sent by a page) or this server's:
// the origin of base (Options.BaseURL, the address payers open the page at, in front of
// any proxy, which may forward another Host), or the request's own Host (the page opened
// at the address the server was reached by).
func sameOrigin(r *http.Request, base string) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	if u.Host == r.Host {
		return true
	}
	b, err := url.Parse(base)
	return base != "" && err == nil && strings.EqualFold(u.Scheme, b.Scheme) && strings.EqualFold(u.Host, b.Host)
}

// formatBRL formats centavos the Brazilian way: "R$ 1.234,56", "-R$ 0,50".
func formatBRL(centavos int64) string {
	sign := ""
	u := uint64(centavos)
	if centavos < 0 {
		sign, u = "-", uint64(-(centavos+1))+1 // no overflow at math.MinInt64
	}
	reais := strconv.FormatUint(u/100, 10)
	var b strings.Builder
	b.WriteString(sign + "R$ ")
	for i, c := range reais {
		if i > 0 && (len(reais)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	cents := u % 100
	b.WriteByte(',')
	b.WriteByte(byte('0' + cents/10))
	b.WriteByte(byte('0' + cents%10))
	return b.String()
}

// formatTimeLeft formats seconds as "HH:MM:SS", with "N <days> " before it from a day on.
func formatTimeLeft(seconds int64, days string) string {
	d, rest := seconds/86400, seconds%86400
	hms := twoDigits(rest/3600) + ":" + twoDigits(rest/60%60) + ":" + twoDigits(rest%60)
	if d > 0 {
		return strconv.FormatInt(d, 10) + " " + days + " " + hms
	}
	return hms
}

func twoDigits(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}
