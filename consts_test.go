package payments_test

import (
	"testing"

	"github.com/matryer/is"
	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/brcode"
	"github.com/pixfoundry/payments/internal/qrpng"
	"github.com/pixfoundry/payments/rail"
	"github.com/pixfoundry/payments/rail/sandbox"
)

// TestConstants: the constants this package writes out as literals, so that go doc shows
// their values, are the values of the packages that act on them.
func TestConstants(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	is.Equal(payments.MinQRSize, qrpng.MinSize) // the renderer's limits
	is.Equal(payments.MaxQRSize, qrpng.MaxSize)
	is.Equal(payments.DefaultQRSize, qrpng.DefaultSize)

	is.Equal(payments.TaxIDCPF, brcode.CPF) // the tax ID types brcode.ParseTaxID reports
	is.Equal(payments.TaxIDCNPJ, brcode.CNPJ)

	is.Equal(payments.OrderPayment, rail.OrderPayment) // what a Rail is handed
	is.Equal(payments.OrderRefund, rail.OrderRefund)
	is.Equal(payments.OrderWithdrawal, rail.OrderWithdrawal)
	is.Equal(payments.SettlementPending, rail.SettlementPending) // what a Rail answers
	is.Equal(payments.SettlementConfirmed, rail.SettlementConfirmed)
	is.Equal(payments.SettlementFailed, rail.SettlementFailed)
	for _, c := range []struct{ ours, rails string }{
		{payments.ReasonInvalidPixKey, rail.ReasonInvalidPixKey},
		{payments.ReasonBankError, rail.ReasonBankError},
		{payments.ReasonNotEnoughBalance, rail.ReasonNotEnoughBalance},
		{payments.ReasonAccountNotFound, rail.ReasonAccountNotFound},
		{payments.ReasonAC03, rail.ReasonAC03},
		{payments.ReasonAC06, rail.ReasonAC06},
		{payments.ReasonAC07, rail.ReasonAC07},
		{payments.ReasonAC14, rail.ReasonAC14},
		{payments.ReasonAG03, rail.ReasonAG03},
		{payments.ReasonAM02, rail.ReasonAM02},
		{payments.ReasonAM04, rail.ReasonAM04},
		{payments.ReasonAM09, rail.ReasonAM09},
		{payments.ReasonBE01, rail.ReasonBE01},
		{payments.ReasonBE17, rail.ReasonBE17},
		{payments.ReasonDS04, rail.ReasonDS04},
		{payments.ReasonMD01, rail.ReasonMD01},
		{payments.ReasonRR04, rail.ReasonRR04},
		{payments.SandboxKeyNotFound, sandbox.KeyNotFound}, // the sandbox's triggers
		{payments.SandboxKeyBankError, sandbox.KeyBankError},
		{payments.SandboxISPB, sandbox.ISPB},
	} {
		is.Equal(c.ours, c.rails) // a failure reason or trigger as its package has it
	}
	is.Equal(payments.SandboxValueNotEnoughBalance, sandbox.ValueNotEnoughBalance)
}
