package payments_test

import (
	"bufio"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
)

// fakeSMTP is a minimal SMTP server on 127.0.0.1 that keeps the DATA of each message; with
// hang it accepts connections and never greets.
type fakeSMTP struct {
	addr string
	mu   sync.Mutex
	data []string
}

func newFakeSMTP(t *testing.T, hang bool) *fakeSMTP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSMTP{addr: ln.Addr().String()}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			if !hang {
				go f.serve(c)
			}
		}
	}()
	return f
}

func (f *fakeSMTP) serve(c net.Conn) {
	defer c.Close()
	rd := bufio.NewReader(c)
	fmt.Fprintf(c, "220 fake ESMTP\r\n")
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return
		}
		switch cmd := strings.ToUpper(strings.TrimSpace(line)); {
		case strings.HasPrefix(cmd, "DATA"):
			fmt.Fprintf(c, "354 go on\r\n")
			var b strings.Builder
			for {
				l, err := rd.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				b.WriteString(l)
			}
			f.mu.Lock()
			f.data = append(f.data, b.String())
			f.mu.Unlock()
			fmt.Fprintf(c, "250 ok\r\n")
		case strings.HasPrefix(cmd, "QUIT"):
			fmt.Fprintf(c, "221 bye\r\n")
			return
		default: // EHLO, MAIL, RCPT
			fmt.Fprintf(c, "250 ok\r\n")
		}
	}
}

// TestSMTPMailer_Message: the e-mail of an event is a message a mail server relays
// unchanged: the subject is the event name and the body the payload in quoted-printable,
// no line over the 998 characters RFC 5322 allows, which decodes to the payload exactly.
// Before, the payload went out as one line of some 1,400 characters.
func TestSMTPMailer_Message(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	smtpd := newFakeSMTP(t, false)
	mailer := payments.SMTPMailer{Addr: smtpd.addr, From: "hooks@loja.example.com"}
	body := `{"charge":{"comment":"` + strings.Repeat("Pedido de cafe = açúcar; ", 80) + `"}}`
	is.NoErr(mailer.SendMail(ctx, payments.MailMessage{To: "ops@loja.example.com", Subject: "OPENPIX:CHARGE_CREATED", Body: []byte(body)}))
	smtpd.mu.Lock()
	defer smtpd.mu.Unlock()
	is.Equal(len(smtpd.data), 1)
	head, text, ok := strings.Cut(smtpd.data[0], "\r\n\r\n")
	head += "\r\n"
	is.True(ok)
	is.True(strings.Contains(head, "Subject: OPENPIX:CHARGE_CREATED\r\n"))
	is.True(strings.Contains(head, "Content-Transfer-Encoding: quoted-printable\r\n"))
	for _, l := range strings.Split(smtpd.data[0], "\r\n") {
		is.True(len(l) <= 998)
	}
	got, err := io.ReadAll(quotedprintable.NewReader(strings.NewReader(text)))
	is.NoErr(err)
	is.Equal(strings.TrimRight(string(got), "\r\n"), body) // the payload, whole
}

// TestSMTPMailer_Timeout: an e-mail webhook's attempt is bounded by the per-attempt
// timeout, as a URL's is: a mail server that never answers costs one timeout and a retry.
// Before, SMTPMailer ignored the context and the pass waited for as long as the server.
func TestSMTPMailer_Timeout(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	smtpd := newFakeSMTP(t, true)
	e := newWebhookEnv(t, stores[0].open(t), payments.Options{WebhookTimeout: 300 * time.Millisecond,
		Mailer: payments.SMTPMailer{Addr: smtpd.addr, From: "hooks@loja.example.com"}})
	w, err := e.svc.CreateWebhook(ctx, payments.CreateWebhookParams{Name: "mail", Email: "ops@loja.example.com", Event: e.svc.EventName(payments.EventChargeCreated)})
	is.NoErr(err)
	newCharge(t, e.svc, "c1")
	done := make(chan error, 1)
	go func() { done <- e.svc.RunDue(ctx) }()
	select {
	case err := <-done:
		is.NoErr(err)
	case <-time.After(10 * time.Second): // a bound for a broken build, not a wait for time to pass
		t.Fatal("RunDue still waiting on the mail server 10 s after a 300 ms webhook timeout")
	}
	as, _, err := e.svc.ListWebhookAttempts(ctx, w.ID, payments.ListParams{})
	is.NoErr(err)
	is.Equal(len(as), 1)
	is.Equal(as[0].Outcome, "retry") // a failure, retried later
}
