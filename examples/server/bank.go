package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pixfoundry/payments"
)

// A bank driver the server can run on, by its -bank name. Only a driver whose money is
// real may serve with -sandbox=false: the sandbox bank settles every payout in a bank that
// does not exist, and an operator who turned the sandbox off for real payers would lose
// track of real money.
type bankDriver struct {
	// open makes the driver's Rail on the server's clock, as the flags configure it.
	open func(clock payments.Clock, c config) (payments.Rail, error)
	// check validates the driver's own flags before anything is opened; nil: it has none.
	check func(c config) error
	// bankCharges says the bank registers the charges (payments.Options.BankCharges).
	bankCharges bool
	// sandbox says its money is make-believe (its Rail says so too: rail.IsSandbox).
	sandbox bool
	// flags names the flags that configure it, for the messages that point at them.
	flags string
}

// banks are the drivers this build has; an embedding program passes any rail.Rail as
// payments.Options.Rail.
var banks = map[string]bankDriver{
	"sandbox": {sandbox: true, open: func(c payments.Clock, _ config) (payments.Rail, error) { return payments.NewSandboxRail(c, 0), nil }},
	// apipix: a PSP of the Central Bank's API Pix (psp.go).
	"apipix": {bankCharges: true, check: checkPSP, flags: "-psp-url, -psp-client-id, -psp-client-secret, -psp-cert, -psp-key, -psp-pix-key, -psp-webhook-secret",
		open: func(_ payments.Clock, c config) (payments.Rail, error) { return openAPIPix(c) }},
}

// defaultBank is the -bank the server runs on unless told otherwise.
const defaultBank = "sandbox"

// bankNames lists the drivers by name, for messages.
func bankNames() string {
	names := make([]string, 0, len(banks))
	for n := range banks {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// checkBank validates -bank together with -sandbox, before anything is opened.
func checkBank(name string, sandboxRoutes bool) error {
	d, ok := banks[name]
	if !ok {
		return badFlag("-rail %q is not a bank driver of this build (it has: %s)", name, bankNames())
	}
	if sandboxRoutes || !d.sandbox {
		return nil
	}
	var real []string
	for n, d := range banks {
		if !d.sandbox {
			real = append(real, fmt.Sprintf("-rail %s (configured by %s)", n, d.flags))
		}
	}
	how := "this build has no real bank driver: a program embedding the library sets payments.Options.Rail to its own"
	if len(real) > 0 {
		sort.Strings(real)
		how = "configure a real one: " + strings.Join(real, "; ")
	}
	return badFlag("-sandbox=false is for real payers, but -rail %s settles payouts in a make-believe bank, so real money would leave the books without leaving any bank; %s", name, how)
}
