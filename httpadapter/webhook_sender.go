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
			return payments.WebhookResponse{}, errors.New("no answer within the timeout")
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
// connection and refuses the ones a public webhook must not reach.
func refusePrivate(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook destination %s: %w", address, err)
	}
	if !publicAddr(ap.Addr()) {
		return fmt.Errorf("webhook destination %s is not a public address", ap.Addr())
	}
	return nil
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsValid() && !a.IsLoopback() && !a.IsPrivate() && !a.IsLinkLocalUnicast() && !a.IsLinkLocalMulticast() &&
		!a.IsInterfaceLocalMulticast() && !a.IsMulticast() && !a.IsUnspecified() && !cgnat.Contains(a)
}
