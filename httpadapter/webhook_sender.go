package httpadapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"github.com/pixfoundry/payments"
)

// WebhookSenderOptions configure NewWebhookSender. The zero value works.
type WebhookSenderOptions struct {
	// AllowPrivate lets deliveries reach loopback, private (RFC 1918, fc00::/7), link-local,
	// CGNAT and unspecified addresses. Off by default: a webhook URL is the caller's input,
	// and a server must not be made to POST into its own network. The sandbox server and
	// tests (receivers on 127.0.0.1) turn it on.
	AllowPrivate bool
}

// NewWebhookSender returns the payments.WebhookSender that POSTs a delivery over HTTP(S)
// with its headers and body, for payments.Options.WebhookSender. The destination's address
// is checked when the connection is dialled, after DNS resolution, so a name that resolves
// (or re-resolves) to a refused address is refused too. Redirects are not followed (a 3xx
// is a failed attempt); the response body is read up to 64 KiB and discarded. The
// per-attempt timeout is the Service's (payments.Options.WebhookTimeout), through ctx.
// A failure's error wraps the standard library's (DNS, dial, TLS, the timeout) and, for a
// refused address, a *payments.Error: the Service reads the class of failure from them for
// the company, and keeps their text, which names addresses, for the log.
func NewWebhookSender(opts WebhookSenderOptions) payments.WebhookSender {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if !opts.AllowPrivate {
		d.Control = refusePrivate
	}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would dial for us and skip the address check
		DialContext:           d.DialContext,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 0, // the attempt's ctx bounds it
		ForceAttemptHTTP2:     true,
	}
	return &webhookSender{client: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type webhookSender struct{ client *http.Client }

// SendWebhook POSTs r and reports the receiver's status and Retry-After.
func (s *webhookSender) SendWebhook(ctx context.Context, r payments.WebhookRequest) (payments.WebhookResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return payments.WebhookResponse{}, err
	}
	for k, v := range r.Header {
		req.Header[k] = v
	}
	res, err := s.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return payments.WebhookResponse{}, fmt.Errorf("no answer within the timeout: %w", context.DeadlineExceeded)
		}
		return payments.WebhookResponse{}, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	return payments.WebhookResponse{Status: res.StatusCode, RetryAfter: retryAfter(res.Header.Get("Retry-After"), time.Now())}, nil
}

// retryAfter reads a Retry-After of seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(min(n, 86400)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), 24*time.Hour)
	}
	return 0
}

// refusePrivate is the dialer's Control: it runs on the resolved address of every
// connection and refuses the ones a public webhook must not reach. The refusal wraps a
// *payments.Error whose message, safe to show the company, names no address: the URL's
// host may resolve to an address inside this network, which only the log may show.
func refusePrivate(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook destination %s: %w", address, err)
	}
	if !publicAddr(ap.Addr()) {
		return fmt.Errorf("webhook destination %s is not a public address: %w", ap.Addr(),
			&payments.Error{Code: payments.EINVALID, Field: "url", Message: "the address is private and not allowed"})
	}
	return nil
}

// notGlobal are the special-purpose ranges (IANA's registries) that are not globally
// reachable and that netip's predicates do not name: a public webhook has no business
// there, and some lead inside a network (an IPv4 address behind a NAT64 or 6to4 prefix).
var notGlobal = func() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range []string{
		"0.0.0.0/8",       // "this network"
		"100.64.0.0/10",   // carrier-grade NAT
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation (TEST-NET-1)
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation (TEST-NET-2)
		"203.0.113.0/24",  // documentation (TEST-NET-3)
		"240.0.0.0/4",     // reserved, and the broadcast address
		"::/96",           // IPv4-compatible IPv6 (deprecated), an IPv4 address inside
		"64:ff9b::/96",    // NAT64 to IPv4
		"64:ff9b:1::/48",  // local NAT64
		"100::/64",        // discard
		"2001::/23",       // IETF protocol assignments (Teredo among them)
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4, an IPv4 address inside
		"3fff::/20",       // documentation (RFC 9637)
		"5f00::/16",       // segment routing (SRv6) SIDs (RFC 9602)
	} {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}()

// publicAddr reports whether a webhook may be delivered to a: a globally reachable unicast
// address.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range notGlobal {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
