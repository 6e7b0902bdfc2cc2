package payments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/rail"
)

// Charges registered with the bank (Options.BankCharges). A bank that collects for the
// company (a rail.Collector, such as a PSP of the Central Bank's API Pix) issues the BR
// Code of each DYNAMIC charge (its cob) and OVERDUE charge (its cobv): a dynamic code
// whose payload the bank serves, and whose Pix the bank reports with the charge's txid.
//
//   - CreateCharge builds the charge first, in a read transaction at the time the charge
//     will carry, so that invalid input and a taken correlationID never reach the bank;
//     then registers it (up to bankIssueAttempts calls, each bounded by
//     Options.SendTimeout, all under one txid, so a retried registration is one charge at
//     the bank); then records it, with the bank's BR Code, in the write transaction. A bank
//     that does not register it is an EUNAVAILABLE *Error on "bank" and nothing is
//     recorded. A registration the bank made but never answered holds a code nobody was
//     given, which nobody can pay; it expires at the bank with the charge's time.
//   - The txid is the charge's transactionID, 32 letters and digits (the API Pix wants 26
//     to 35), so the bank's Pix route to the charge as every received Pix does
//     (receive_routing.go).
//   - DeleteCharge withdraws the charge at the bank before deleting it, so a deleted
//     charge cannot be paid; if the bank does not answer, nothing is deleted (EUNAVAILABLE).
//   - The charges the Service makes by itself (a subscription's, in the due pass) keep the
//     static code with the company's key, which is payable wherever the key is held and
//     routes by its txid too.
//   - Moving a bank charge's expiry (UpdateChargeExpiry) is not done in this version: it
//     is refused, saying so.

// bankIssueAttempts is how many times CreateCharge asks the bank to register a charge
// before it answers that the bank is unavailable.
const bankIssueAttempts = 3

// issueAtBank registers with the bank the charge p describes, as createCharge will build
// it at now. It returns nil (and no error) when there is nothing to register: the call
// will return an existing charge (ReturnExisting).
func (s *Service) issueAtBank(ctx context.Context, now time.Time, p CreateChargeParams) (*rail.IssuedCharge, error) {
	var rc rail.Charge
	existing := false
	err := s.view(ctx, func(t *txn) error {
		t.now = now // the time the charge will carry
		corr, err := cleanCorrelationID("correlationID", p.CorrelationID, true)
		if err != nil {
			return err
		}
		if _, err := t.chargeByKey(correlationKey(corr)); err == nil {
			if existing = p.ReturnExisting; !existing {
				return conflict("correlationID", "a charge with correlationID %q already exists", corr)
			}
			return nil
		} else if ErrorCode(err) != ENOTFOUND {
			return err
		}
		var c Charge
		if err := t.buildCharge(&c, corr, &p); err != nil {
			return err
		}
		co, err := t.loadCompany()
		if err != nil {
			return err
		}
		rc, err = bankCharge(c, co, p.Customer)
		return err
	})
	if err != nil || existing {
		return nil, err
	}
	var last error
	for range bankIssueAttempts {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.core.sendTimeout)
		issued, err := s.core.bank.IssueCharge(cctx, rc)
		cancel()
		if err == nil {
			if _, perr := brcode.Parse(issued.BRCode); perr != nil {
				return nil, unavailable("bank", perr, "the bank registered the charge but gave no valid BR Code: try again")
			}
			return &issued, nil
		}
		var inv *rail.InvalidError
		if errors.As(err, &inv) {
			return nil, invalid(inv.Field, "the bank refused the charge: %s", inv.Message)
		}
		if ctx.Err() != nil {
			return nil, internal(ctx.Err())
		}
		last = err
	}
	s.core.log.Warn("registering a charge with the bank", "company", s.company, "txid", rc.TxID, "err", last)
	return nil, unavailable("bank", last, "the bank did not register the charge (%v): nothing was created; try again", last)
}

// bankCharge is c as the bank registers it: under its transactionID, to the company's
// key (one the bank must hold for the account), the company as the merchant and, for an OVERDUE charge, its
// due terms and payer (which the API Pix requires for a due-date charge).
func bankCharge(c Charge, co Company, cust *CreateCustomerParams) (rail.Charge, error) {
	rc := rail.Charge{TxID: c.TransactionID, Key: co.PixKey, Value: c.Value, Expires: c.ExpiresDate,
		MerchantName: co.MerchantName, MerchantCity: co.MerchantCity, Message: c.Comment}
	if cust != nil && cust.TaxID != "" {
		tax, _, err := parseTaxIDQuiet(cust.TaxID)
		if err != nil {
			return rail.Charge{}, invalid("customer.taxID", "customer.taxID is not a valid CPF or CNPJ")
		}
		name, err := cleanString("customer.name", cust.Name, 200)
		if err != nil {
			return rail.Charge{}, err
		}
		rc.PayerName, rc.PayerTaxID = name, tax
	}
	if c.Type != ChargeOverdue {
		return rc, nil
	}
	if rc.PayerName == "" || rc.PayerTaxID == "" {
		return rail.Charge{}, invalid("customer", "an OVERDUE charge registered with the bank needs a customer with name and taxID: the bank's due-date charge names its payer")
	}
	if c.DueDate == nil {
		return rail.Charge{}, internal(fmt.Errorf("OVERDUE charge %s without a due date", c.ID))
	}
	due := c.DueDate.In(brasilia)
	d := &rail.DueTerms{Date: due.Format(time.DateOnly), DaysAfter: c.DaysAfterDueDate}
	if f := c.Fines; f != nil && f.Value > 0 {
		if f.Type == FineFixed {
			d.FineCentavos = f.Value
		} else {
			d.FineBasisPoints = f.Value
		}
	}
	if in := c.Interests; in != nil && in.Value > 0 {
		if in.Type == InterestFixed {
			d.InterestCentavosPerDay = in.Value
		} else {
			d.InterestBasisPointsPerDay = in.Value
		}
	}
	if ds := c.DiscountSettings; ds != nil {
		switch ds.Modality {
		case DiscountFixedUntilDate, DiscountPercentageUntilDate:
			for _, tier := range ds.DiscountFixedDate {
				t := rail.DiscountTier{Date: due.AddDate(0, 0, -tier.DaysActive).Format(time.DateOnly)}
				if ds.Modality == DiscountFixedUntilDate {
					t.Centavos = tier.Value
				} else {
					t.BasisPoints = tier.Value
				}
				d.DiscountTiers = append(d.DiscountTiers, t)
			}
		case DiscountValuePerDay:
			d.DiscountCentavosPerDay = ds.Value
		case DiscountPercentagePerDay:
			d.DiscountBasisPointsPerDay = ds.Value
		}
	}
	rc.Due = d
	return rc, nil
}

// removeAtBank withdraws the charge c at the bank, when the bank issued its code (a
// dynamic BR Code under its transactionID): a charge the bank no longer knows is gone
// already. A bank that does not answer is EUNAVAILABLE on "bank".
func (s *Service) removeAtBank(ctx context.Context, c Charge) error {
	if !s.atBank(c) {
		return nil // a static code of the company's: nothing at the bank
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.core.sendTimeout)
	defer cancel()
	err := s.core.bank.RemoveCharge(cctx, c.TransactionID)
	switch {
	case err == nil, errors.Is(err, rail.ErrUnknownCharge):
		return nil
	case ctx.Err() != nil:
		return internal(ctx.Err())
	}
	s.core.log.Warn("removing a charge at the bank", "company", s.company, "txid", c.TransactionID, "err", err)
	return unavailable("bank", err, "the bank did not withdraw the charge (%v): nothing was deleted; try again", err)
}

// atBank reports whether c is a charge the bank registered: with Options.BankCharges,
// every DYNAMIC and OVERDUE charge but a subscription's. (One made before the option was
// on is not at the bank; removing it there finds nothing, which is no error.)
func (s *Service) atBank(c Charge) bool {
	return s.core.bank != nil && c.Subscription == "" && (c.Type == ChargeDynamic || c.Type == ChargeOverdue)
}
