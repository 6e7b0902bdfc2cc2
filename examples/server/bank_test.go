package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments"
	"github.com/pixfoundry/payments/rail/sandbox"
)

// testRealBank is a -bank of the tests only: the sandbox's behaviour on a Rail that does
// not say it is a sandbox, standing in for a real bank where the tests need the server
// with -sandbox=false.
const testRealBank = "test-real"

func init() {
	banks[testRealBank] = bankDriver{flags: "nothing (tests only)", open: func(c payments.Clock, _ config) (payments.Rail, error) {
		return notSandbox{sandbox.New(c, 0)}, nil
	}}
}

// notSandbox is a sandbox bank that does not say so.
type notSandbox struct{ *sandbox.Rail }

func (notSandbox) Sandbox() bool { return false }

// TestRun_SaysSandbox: a server on the sandbox bank says so at start and in /health; one
// on a real bank does not.
func TestRun_SaysSandbox(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := start(t, "-db", "memory:")
	is.True(strings.Contains(srv.stderr.String(), "bank: sandbox")) // the start line
	status, body := call(t, "GET", srv.base+"/health", "", "")
	is.Equal(status, 200)
	is.Equal(body["sandbox"], true)
	is.NoErr(srv.stop())

	srv = start(t, "-db", "memory:", "-sandbox=false", "-bank", testRealBank)
	is.True(!strings.Contains(srv.stderr.String(), "bank: sandbox"))
	status, body = call(t, "GET", srv.base+"/health", "", "")
	is.Equal(status, 200)
	is.Equal(body["sandbox"], false)
	is.NoErr(srv.stop())
}

// TestCLI_NoSandboxExits2: the server binary started as an operator would for real
// payers, `server -sandbox=false`, exits 2 with the message naming what configures a bank,
// and opens nothing.
func TestCLI_NoSandboxExits2(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	bin, db := buildServer(t)
	out, err := exec.Command(bin, "-sandbox=false", "-db", db).CombinedOutput()
	var exit *exec.ExitError
	is.True(errors.As(err, &exit))                                                 // it ran and exited
	is.Equal(exit.ExitCode(), 2)                                                   // a usage error
	is.True(strings.Contains(string(out), "make-believe bank"))                    // says why
	is.True(strings.Contains(string(out), "-rail apipix (configured by -psp-url")) // and what configures a real bank
	_, err = os.Stat(db)
	is.True(errors.Is(err, fs.ErrNotExist)) // nothing was opened
}
