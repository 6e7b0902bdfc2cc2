package payments

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"mime/quotedprintable"
	"net"
	"net/smtp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Mailer sends the e-mail of a webhook whose action is e-mail (Webhook.Email instead of a
// URL). Options.Mailer; the default is a *MemoryMailer, which only records the messages.
type Mailer interface {
	SendMail(ctx context.Context, m MailMessage) error
}

// MailMessage is one e-mail: the event's JSON payload as the body.
type MailMessage struct {
	To      string
	Subject string
	Body    []byte
}

// MemoryMailer records the messages it is given, and logs each, instead of sending them:
// the default Mailer, for the sandbox and tests.
type MemoryMailer struct {
	Logger *slog.Logger // default discards
	// Keep is how many of the latest messages it keeps; default DefaultMailKeep. Older ones
	// are dropped, so that a process running for months, whose clients may create e-mail
	// webhooks freely, does not hold every message it was ever given.
	Keep int
	mu   sync.Mutex
	sent []MailMessage
}

// DefaultMailKeep is how many messages a MemoryMailer keeps by default.
const DefaultMailKeep = 1000

// SendMail records m, dropping the oldest message kept when it holds Keep already.
func (m *MemoryMailer) SendMail(_ context.Context, msg MailMessage) error {
	keep := m.Keep
	if keep <= 0 {
		keep = DefaultMailKeep
	}
	m.mu.Lock()
	if len(m.sent) >= keep {
		m.sent = slices.Delete(m.sent, 0, len(m.sent)-keep+1)
	}
	m.sent = append(m.sent, msg)
	m.mu.Unlock()
	if m.Logger != nil {
		m.Logger.Info("webhook e-mail recorded, not sent (no SMTP configured)", "to", msg.To, "subject", msg.Subject)
	}
	return nil
}

// Messages returns a copy of the messages kept, oldest first.
func (m *MemoryMailer) Messages() []MailMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]MailMessage(nil), m.sent...)
}

// SMTPMailer sends through an SMTP server with net/smtp (STARTTLS when the server offers
// it). Auth may be nil.
type SMTPMailer struct {
	Addr string // host:port
	From string
	Auth smtp.Auth
}

// SendMail sends m, within ctx: a server that does not answer before ctx ends (the
// webhook's per-attempt timeout) fails the attempt, which is retried as a URL's is. The
// body is the payload in quoted-printable, so that no line passes the 998 characters a
// mail line may have (RFC 5322) and the JSON arrives whole.
func (s SMTPMailer) SendMail(ctx context.Context, m MailMessage) error {
	for _, v := range []string{m.To, m.Subject, s.From} {
		if strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("mail header with a line break")
		}
	}
	var msg bytes.Buffer
	fmt.Fprintf(&msg, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMIME-Version: 1.0\r\n"+
		"Content-Type: application/json; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n",
		s.From, m.To, m.Subject, time.Now().UTC().Format(time.RFC1123Z))
	qp := quotedprintable.NewWriter(&msg)
	if _, err := qp.Write(m.Body); err != nil {
		return err
	}
	if err := qp.Close(); err != nil {
		return err
	}
	msg.WriteString("\r\n")

	host, _, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return fmt.Errorf("smtp: address %q: %w", s.Addr, err)
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() }) // net/smtp takes no context: end the conversation
	defer stop()
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return cmp.Or(ctx.Err(), err)
	}
	if err := s.send(c, host, m.To, msg.Bytes()); err != nil {
		return cmp.Or(ctx.Err(), err)
	}
	return nil
}

// send is net/smtp's SendMail on the client c.
func (s SMTPMailer) send(c *smtp.Client, host, to string, msg []byte) error {
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: host}); err != nil {
			return err
		}
	}
	if s.Auth != nil {
		if ok, _ := c.Extension("AUTH"); !ok {
			return errors.New("smtp: server doesn't support AUTH")
		}
		if err := c.Auth(s.Auth); err != nil {
			return err
		}
	}
	if err := c.Mail(s.From); err != nil {
		return err
	}
	if err := c.Rcpt(to); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}
