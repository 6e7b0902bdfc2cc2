package payments

import (
	"context"
	"fmt"
	"log/slog"
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

// SendMail sends m. net/smtp takes no context: the call ends when the server answers.
func (s SMTPMailer) SendMail(_ context.Context, m MailMessage) error {
	for _, v := range []string{m.To, m.Subject, s.From} {
		if strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("mail header with a line break")
		}
	}
	msg := fmt.Sprintf("From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nContent-Type: application/json; charset=utf-8\r\n\r\n%s\r\n",
		s.From, m.To, m.Subject, time.Now().UTC().Format(time.RFC1123Z), m.Body)
	return smtp.SendMail(s.Addr, s.Auth, s.From, []string{m.To}, []byte(msg))
}
