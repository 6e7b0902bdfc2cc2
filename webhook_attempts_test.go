package payments_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/store/memory"
)

// failingMailer fails every e-mail with an error naming the mail server.
type failingMailer struct{}

func (failingMailer) SendMail(context.Context, payments.MailMessage) error {
	return errors.New("dial tcp 10.9.9.9:25: connect: connection refused (smtp.internal.corp)")
}

// TestService_WebhookAttempt_NamesNoInternals: a failed delivery's attempt, which the
// company reads, says the class of failure only, as the test call does: not the error's
// text, which names the internal resolver and the addresses a host resolved to, or the
// mail server. Before, the attempt kept err.Error().
func TestService_WebhookAttempt_NamesNoInternals(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	calls := 0
	sender := senderFunc(func(context.Context, payments.WebhookRequest) (payments.WebhookResponse, error) {
		calls++
		if calls == 1 {
			return payments.WebhookResponse{Status: 200}, nil // the test call
		}
		return payments.WebhookResponse{}, &url.Error{Op: "Post", URL: "https://hooks.example.com/",
			Err: &net.DNSError{Err: "no such host", Name: "hooks.example.com", Server: "10.0.0.53:53"}}
	})
	svc, err := payments.New(memory.New(), payments.Options{Clock: payments.NewManualClock(t0), WebhookSender: sender,
		Mailer: failingMailer{}, DefaultCompany: payments.CreateCompanyParams{Name: "Loja", PixKey: "pix@loja.example.com"}})
	is.NoErr(err)
	hook := createWebhook(t, svc, "https://hooks.example.com/", payments.EventChargeCreated)
	mail, err := mailHook(svc, 1, svc.EventName(payments.EventChargeCreated))
	is.NoErr(err)
	newCharge(t, svc, "c1")
	is.NoErr(svc.RunDue(ctx))

	for _, tc := range []struct {
		id, want string
	}{
		{hook.ID, "the webhook URL's host could not be resolved"},
		{mail.ID, "the e-mail could not be sent"},
	} {
		as, _, err := svc.ListWebhookAttempts(ctx, tc.id, payments.ListParams{})
		is.NoErr(err)
		is.Equal(len(as), 1)
		is.Equal(as[0].Outcome, "retry")
		is.Equal(as[0].Error, tc.want) // the class of failure
		for _, secret := range []string{"10.0.0.53", "10.9.9.9", "internal.corp", "dial"} {
			is.True(!strings.Contains(fmt.Sprint(as[0]), secret)) // nothing internal
		}
	}
}
