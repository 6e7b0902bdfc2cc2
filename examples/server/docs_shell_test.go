package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pixfoundry/payments/rail/apipix/apipixtest"
	"github.com/pixfoundry/payments/store/postgres/pgtest"
)

// docShell runs the shell blocks of one doc file, in order, sharing their variables and one
// server (started at the first command that needs it), as a reader pasting them would.
type docShell struct {
	t        *testing.T
	root     string
	file     string
	dir      string // the working directory: curl -o writes here
	vars     map[string]string
	srv      *running // for curl
	appID    string
	hook     *httptest.Server
	psp      *apipixtest.PSP
	pspFiles [3]string         // cert, key and CA of psp
	dbs      map[string]string // a doc's -db value and what the test uses instead
	servers  []running         // started by go run lines
}

func newDocShell(t *testing.T, root, file string) *docShell {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(hook.Close)
	return &docShell{t: t, root: root, file: file, dir: t.TempDir(), vars: map[string]string{}, hook: hook, dbs: map[string]string{}}
}

// fail reports a failure at a line of the doc.
func (sh *docShell) fail(line int, format string, args ...any) {
	sh.t.Helper()
	sh.t.Errorf("%s:%d: %s", sh.file, line, fmt.Sprintf(format, args...))
}

// runBlock runs a sh block, or the commands ("$ " lines) of a console block.
func (sh *docShell) runBlock(b docBlock) {
	text := b.text
	if b.info == "console" {
		var cmds strings.Builder
		more := false
		for _, l := range strings.Split(text, "\n") {
			switch {
			case more:
				cmds.WriteString(l + "\n")
			case strings.HasPrefix(l, "$ "):
				cmds.WriteString(strings.TrimPrefix(l, "$ ") + "\n")
			default:
				cmds.WriteString("\n") // output; a blank line keeps the line numbers
			}
			more = (more || strings.HasPrefix(l, "$ ")) && strings.HasSuffix(l, "\\")
		}
		text = cmds.String()
	}
	stmts, err := parseShell(text, b.line)
	if err != nil {
		sh.fail(b.fence, "%v", err)
		return
	}
	for _, st := range stmts {
		sh.t.Logf("%s:%d: %s", sh.file, st.line, st.source)
		if err := sh.runStmt(st); err != nil {
			sh.fail(st.line, "%v", err)
		}
	}
}

// statusComment is a comment that gives the status a refused command answers.
var statusComment = regexp.MustCompile(`^([45][0-9][0-9])\b`)

// exitComment is a comment that says the command exits with an error.
var exitComment = regexp.MustCompile(`^exits ([0-9]+)(?::\s*(.*))?$`)

// runStmt runs one statement: assignments, or a pipeline with its leading assignments.
func (sh *docShell) runStmt(st shStmt) error {
	if len(st.pipeline) == 1 {
		words := st.pipeline[0]
		if len(words) > 0 && words[0].literal() == "export" {
			if len(words) == 1 {
				return errors.New("export of nothing")
			}
			for _, w := range words[1:] {
				name, value, err := sh.assignment(w)
				if err != nil {
					return err
				}
				if name == "" {
					return fmt.Errorf("export %s: only export NAME=value is supported", w.literal())
				}
				sh.vars[name] = value
				sh.t.Setenv(name, value)
			}
			return nil
		}
		n := 0
		for ; n < len(words); n++ {
			if !words[n].isAssignment() {
				break
			}
		}
		if n == len(words) {
			for _, w := range words {
				name, value, err := sh.assignment(w)
				if err != nil {
					return err
				}
				sh.vars[name] = value
			}
			return nil
		}
	}
	_, err := sh.runPipeline(st.pipeline, st.comment)
	return err
}

// assignment evaluates a NAME=value word. A value of "..." is one the reader fills in:
// $APP_ID, the file's server's App ID; PAYMENTS_PSP_CLIENT_SECRET, the fake PSP's.
func (sh *docShell) assignment(w shWord) (name, value string, err error) {
	if !w.isAssignment() {
		return "", "", nil
	}
	name, rest, _ := strings.Cut(w[0].lit, "=")
	w = append(shWord{{lit: rest}}, w[1:]...)
	if w.literal() == "..." {
		switch name {
		case "APP_ID":
			sh.server()
			return name, sh.appID, nil
		case pspEnvSecret:
			return name, sh.fakePSP().ClientSecret(), nil
		default:
			return "", "", fmt.Errorf("%s='...': TestDocs knows no value to fill in for %s", name, name)
		}
	}
	value, err = sh.expand(w)
	return name, value, err
}

// runPipeline runs the commands of a pipeline, each given the output of the one before,
// and returns the last one's output. comment is the statement's trailing comment.
func (sh *docShell) runPipeline(p []shCmd, comment string) ([]byte, error) {
	var out []byte
	for i, words := range p {
		var env []string
		for len(words) > 0 && words[0].isAssignment() {
			name, value, err := sh.assignment(words[0])
			if err != nil {
				return nil, err
			}
			env = append(env, name+"="+value)
			words = words[1:]
		}
		args := make([]string, len(words))
		for j, w := range words {
			a, err := sh.expand(w)
			if err != nil {
				return nil, err
			}
			args[j] = a
		}
		if len(args) == 0 {
			return nil, errors.New("an empty command")
		}
		if len(env) > 0 && !(args[0] == "go" && len(args) > 1 && args[1] == "test") && args[0] != "bash" {
			return nil, fmt.Errorf("%s: TestDocs takes NAME=value before go test and bash only", args[0])
		}
		var err error
		switch {
		case args[0] == "curl":
			out, err = sh.curl(args, comment)
		case args[0] == "go" && len(args) > 2 && args[1] == "run" && args[2] == "./examples/server":
			err = sh.goRun(args[3:], comment)
			out = nil
		case args[0] == "go" && len(args) > 1 && args[1] == "test":
			err = sh.goTest(args[2:], env)
			out = nil
		case args[0] == "bash" && len(args) == 2:
			err = sh.bashScript(args[1], env)
			out = nil
		case args[0] == "openssl" && len(args) == 4 && args[1] == "rand" && args[2] == "-hex":
			n, convErr := strconv.Atoi(args[3])
			if convErr != nil || n <= 0 || n > 1024 {
				return nil, fmt.Errorf("openssl rand -hex %s: not a byte count", args[3])
			}
			b := make([]byte, n)
			_, _ = rand.Read(b)
			out = []byte(hex.EncodeToString(b) + "\n")
		case i > 0 && (args[0] == "grep" || args[0] == "head" || args[0] == "cut"): // filters: run for real
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Stdin = bytes.NewReader(out)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err = cmd.Output()
			if err != nil {
				err = fmt.Errorf("%s: %v %s", strings.Join(args, " "), err, stderr.String())
			}
		default:
			return nil, fmt.Errorf("unsupported command %q: TestDocs runs curl, go run ./examples/server, go test, bash <script>, openssl rand -hex, and grep, head, cut after a |; reshape the block or teach docs_test.go the command", strings.Join(args, " "))
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// expand evaluates a word: its variables and command substitutions.
func (sh *docShell) expand(w shWord) (string, error) {
	var s strings.Builder
	for _, p := range w {
		switch {
		case p.variable != "":
			v, ok := sh.vars[p.variable]
			if !ok && p.variable == "APP_ID" { // set by the reader, as the README's tour says
				sh.server()
				v, ok = sh.appID, true
			}
			if !ok {
				return "", fmt.Errorf("$%s is not set", p.variable)
			}
			s.WriteString(v)
		case p.subst != "":
			stmts, err := parseShell(p.subst, 0)
			if err != nil {
				return "", fmt.Errorf("$(%s): %v", p.subst, err)
			}
			if len(stmts) != 1 {
				return "", fmt.Errorf("$(%s): one command expected", p.subst)
			}
			out, err := sh.runPipeline(stmts[0].pipeline, "")
			if err != nil {
				return "", fmt.Errorf("$(%s): %v", p.subst, err)
			}
			s.WriteString(strings.TrimRight(string(out), "\n"))
		default:
			s.WriteString(p.lit)
		}
	}
	return s.String(), nil
}

// server is the file's server for its curl commands, started at first use on -db memory:.
func (sh *docShell) server() *running {
	if sh.srv == nil {
		srv := start(sh.t, "-db", "memory:")
		m := appIDLine.FindStringSubmatch(srv.stdout.String())
		if m == nil {
			sh.t.Fatalf("%s: the server printed no App ID:\n%s", sh.file, srv.stdout.String())
		}
		sh.srv, sh.appID = &srv, m[1]
	}
	return sh.srv
}

// curl does what curl does with the options the docs use, against the file's server, and
// checks the status: 2xx, or the one the comment starts with.
func (sh *docShell) curl(args []string, comment string) ([]byte, error) {
	var method, url, body, output string
	hasBody := false
	header := http.Header{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("curl %s: missing its value", a)
			}
			i++
			return args[i], nil
		}
		var err error
		switch {
		case a == "-s" || a == "--silent" || a == "-S" || a == "-sS":
		case a == "-X" || a == "--request":
			method, err = value()
		case a == "-H" || a == "--header":
			var h string
			h, err = value()
			name, v, _ := strings.Cut(h, ":")
			header.Set(name, strings.TrimSpace(v))
		case a == "-d" || a == "--data" || a == "--data-raw":
			body, err = value()
			hasBody = true
		case a == "-o" || a == "-so" || a == "--output":
			output, err = value()
		case strings.HasPrefix(a, "-"):
			return nil, fmt.Errorf("curl option %s: TestDocs does not know it (it knows -s, -X, -H, -d, -o)", a)
		default:
			if url != "" {
				return nil, fmt.Errorf("curl: two URLs, %s and %s", url, a)
			}
			url = a
		}
		if err != nil {
			return nil, err
		}
	}
	if method == "" {
		method = "GET"
		if hasBody {
			method = "POST"
		}
	}
	if hasBody && header.Get("Content-Type") == "" {
		header.Set("Content-Type", "application/x-www-form-urlencoded") // curl's default for -d
	}
	srv := sh.server()
	addr := strings.TrimPrefix(srv.base, "http://")
	url = strings.TrimPrefix(url, "http://")
	for _, docAddr := range []string{"localhost:8080", "127.0.0.1:8080"} {
		if strings.HasPrefix(url, docAddr+"/") {
			url = addr + strings.TrimPrefix(url, docAddr)
		}
	}
	if !strings.HasPrefix(url, addr+"/") {
		return nil, fmt.Errorf("curl %s: not the server of localhost:8080", url)
	}
	body = strings.ReplaceAll(body, "http://127.0.0.1:9000", sh.hook.URL)
	req, err := http.NewRequest(method, "http://"+url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = header
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	reply, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	want := "2xx"
	ok := res.StatusCode/100 == 2
	if m := statusComment.FindStringSubmatch(comment); m != nil {
		want = m[1]
		ok = strconv.Itoa(res.StatusCode) == want
	}
	if !ok {
		return nil, fmt.Errorf("%s %s: %d, want %s: %s", method, url, res.StatusCode, want, reply)
	}
	if output != "" {
		if len(reply) == 0 {
			return nil, fmt.Errorf("%s %s: an empty body for -o %s", method, url, output)
		}
		return nil, os.WriteFile(filepath.Join(sh.dir, filepath.Base(output)), reply, 0o644)
	}
	return reply, nil
}

// fakePSP is the file's fake PSP of the API Pix, for -rail apipix and its -psp-* flags.
func (sh *docShell) fakePSP() *apipixtest.PSP {
	if sh.psp == nil {
		sh.psp = apipixtest.New(sh.t, apipixtest.Options{})
		cert, key, ca, err := sh.psp.WritePEM(sh.t.TempDir())
		if err != nil {
			sh.t.Fatal(err)
		}
		sh.pspFiles = [3]string{cert, key, ca}
	}
	return sh.psp
}

// serverArgs is a doc's command line for the test: its own listening address, a database of
// its own for the doc's (a temporary file, the memory store, or with PAYMENTS_POSTGRES_URL a
// schema of it for a postgres:// URL, the same one for the same URL), the operator listener on
// a free port and the fake PSP for the -psp-* flags. pg is false when the doc names a
// PostgreSQL database and the variable is not set.
func (sh *docShell) serverArgs(args []string) (out []string, pg, fresh bool) {
	pg, fresh = true, true
	db := ""
	psp := false
	for i := 0; i < len(args); i++ {
		name, value, inline := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			out = append(out, args[i])
			continue
		}
		switch name {
		case "addr", "db", "admin-addr", "psp-url", "psp-token-url", "psp-client-id", "psp-client-secret", "psp-cert", "psp-key", "psp-ca", "psp-pix-key":
			if !inline {
				if i+1 >= len(args) {
					return append(out, args[i]), pg, fresh // the server says what is missing
				}
				i++
				value = args[i]
			}
		default:
			out = append(out, args[i])
			continue
		}
		if strings.HasPrefix(name, "psp-") {
			psp = true
		}
		switch name {
		case "addr": // start listens on a free port
		case "db":
			db = value
		case "admin-addr":
			out = append(out, "-admin-addr", "127.0.0.1:0")
		case "psp-url":
			out = append(out, "-psp-url", sh.fakePSP().URL())
		case "psp-token-url":
			out = append(out, "-psp-token-url", sh.fakePSP().TokenURL())
		case "psp-client-id":
			out = append(out, "-psp-client-id", sh.fakePSP().ClientID())
		case "psp-client-secret":
			out = append(out, "-psp-client-secret", sh.fakePSP().ClientSecret())
		case "psp-cert":
			sh.fakePSP()
			out = append(out, "-psp-cert", sh.pspFiles[0])
		case "psp-key":
			sh.fakePSP()
			out = append(out, "-psp-key", sh.pspFiles[1])
		case "psp-ca": // the fake PSP's, below
		case "psp-pix-key":
			out = append(out, "-psp-pix-key", sh.fakePSP().PixKey())
		}
	}
	if psp {
		sh.fakePSP()
		out = append(out, "-psp-ca", sh.pspFiles[2])
	}
	postgres := strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
	if postgres && os.Getenv(pgtest.EnvURL) == "" {
		return append(out, "-db", db), false, true
	}
	use, ok := sh.dbs[db]
	fresh = !ok
	switch {
	case ok:
	case db == "memory:":
		use = db
	case postgres:
		use = pgtest.URL(sh.t)
	default:
		use = filepath.Join(sh.t.TempDir(), "payments.db")
	}
	sh.dbs[db] = use
	return append(out, "-db", use), pg, fresh
}

// goRun starts the server as the doc's go run ./examples/server line does and checks it
// serves (a new database printing its App ID), or, after "# exits N: message", that it exits
// with that status and message.
func (sh *docShell) goRun(args []string, comment string) error {
	args, pg, fresh := sh.serverArgs(args)
	if m := exitComment.FindStringSubmatch(comment); m != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var stdout, stderr lockedBuffer
		code := cli(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), &stdout, &stderr)
		if strconv.Itoa(code) != m[1] || !strings.Contains(stderr.String(), m[2]) {
			return fmt.Errorf("go run ./examples/server %s: exit status %d, want %s with %q; stderr:\n%s", strings.Join(args, " "), code, m[1], m[2], stderr.String())
		}
		return nil
	}
	// The flags are checked first, as the server checks them, for a short message.
	var stderr bytes.Buffer
	if _, err := parseFlags(args, &stderr); err != nil {
		msg, _, _ := strings.Cut(stderr.String(), "\n")
		if msg != "" {
			err = fmt.Errorf("%v: %s", err, msg)
		}
		return fmt.Errorf("go run ./examples/server %s: %v", strings.Join(args, " "), err)
	}
	if !pg {
		sh.t.Logf("%s: not started, %s is not set: flags checked only", sh.file, pgtest.EnvURL)
		return nil
	}
	srv := start(sh.t, args...)
	sh.servers = append(sh.servers, srv)
	if fresh && !appIDLine.MatchString(srv.stdout.String()) {
		return fmt.Errorf("go run ./examples/server %s: no App ID printed on a new database; stdout:\n%s", strings.Join(args, " "), srv.stdout.String())
	}
	return nil
}

// stopServers stops the servers of go run lines, which must stop cleanly.
func (sh *docShell) stopServers() {
	for _, srv := range sh.servers {
		if err := srv.stop(); err != nil {
			sh.t.Errorf("%s: a server of its go run lines did not stop cleanly: %v\nstderr:\n%s", sh.file, err, srv.stderr.String())
		}
	}
}

// goTestValueFlags are the go test flags the docs may give that take a value.
var goTestValueFlags = map[string]bool{"run": true, "bench": true, "count": true, "timeout": true, "benchtime": true,
	"fuzz": true, "fuzztime": true, "list": true, "cpu": true, "p": true, "tags": true, "skip": true}

// goTest checks a go test line without running it: its packages exist, its -run and -bench
// (each alternative of a|b) name functions of theirs, its NAME=value variables are read by
// the code.
func (sh *docShell) goTest(args, env []string) error {
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		if !sh.readsEnv(name) {
			return fmt.Errorf("%s: no Go file of the module reads this variable", name)
		}
	}
	flags := map[string]string{}
	var pkgs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			pkgs = append(pkgs, a)
			continue
		}
		name, value, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if goTestValueFlags[name] && !inline {
			if i+1 >= len(args) {
				return fmt.Errorf("go test %s: missing its value", a)
			}
			i++
			value = args[i]
		}
		flags[name] = value
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	var funcs []string
	for _, p := range pkgs {
		dir, all := strings.CutSuffix(p, "/...")
		if p == "./..." {
			dir = "."
		}
		if !strings.HasPrefix(dir, ".") {
			return fmt.Errorf("go test %s: TestDocs checks ./relative packages only", p)
		}
		fs, err := sh.testFunctions(filepath.Join(sh.root, dir), all)
		if err != nil {
			return fmt.Errorf("go test %s: %v", p, err)
		}
		funcs = append(funcs, fs...)
	}
	for _, f := range []struct{ flag, prefix string }{{"run", "Test|Example|Fuzz"}, {"bench", "Benchmark"}} {
		re, ok := flags[f.flag]
		if !ok || re == "^$" || re == "." {
			continue
		}
		if _, err := regexp.Compile(re); err != nil {
			return fmt.Errorf("go test -%s %s: %v", f.flag, re, err)
		}
		alts := []string{re}
		if !strings.ContainsAny(re, "()") {
			alts = strings.Split(re, "|")
		}
		for _, alt := range alts {
			top, _, _ := strings.Cut(alt, "/")
			rx, err := regexp.Compile(top)
			if err != nil {
				return fmt.Errorf("go test -%s %s: %v", f.flag, re, err)
			}
			found := false
			for _, fn := range funcs {
				if regexp.MustCompile("^("+f.prefix+")").MatchString(fn) && rx.MatchString(fn) {
					found = true
					break
				}
			}
			if !found {
				return fmt.Errorf("go test -%s %s: no function of %s matches %q", f.flag, re, strings.Join(pkgs, " "), alt)
			}
		}
	}
	return nil
}

var testFuncLine = regexp.MustCompile(`(?m)^func ((Test|Benchmark|Example|Fuzz)\w*)\(`)

// testFunctions lists the test, benchmark, example and fuzz functions of the package in dir,
// and with all of the packages below it; a directory without Go files is an error.
func (sh *docShell) testFunctions(dir string, all bool) ([]string, error) {
	var funcs []string
	goFiles := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && (!all || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		goFiles++
		if strings.HasSuffix(path, "_test.go") {
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range testFuncLine.FindAllStringSubmatch(string(src), -1) {
				funcs = append(funcs, m[1])
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if goFiles == 0 {
		return nil, errors.New("no Go files there")
	}
	return funcs, nil
}

// readsEnv says whether a Go file of the module names the environment variable.
func (sh *docShell) readsEnv(name string) bool {
	found := false
	_ = filepath.WalkDir(sh.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if found {
			return fs.SkipAll
		}
		if d.IsDir() && path != sh.root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			src, err := os.ReadFile(path)
			if err == nil && bytes.Contains(src, []byte(strconv.Quote(name))) {
				found = true
			}
		}
		return nil
	})
	return found
}

// bashScript checks a script the docs run with bash: it is in the repository and parses,
// and each variable the command sets (env, NAME=value) is one the script reads.
func (sh *docShell) bashScript(path string, env []string) error {
	full := filepath.Join(sh.root, path)
	script, err := os.ReadFile(full)
	if err != nil {
		return fmt.Errorf("bash %s: %v", path, err)
	}
	if out, err := exec.Command("bash", "-n", full).CombinedOutput(); err != nil {
		return fmt.Errorf("bash -n %s: %v\n%s", path, err, out)
	}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !bytes.Contains(script, []byte("${"+name)) && !bytes.Contains(script, []byte("$"+name)) {
			return fmt.Errorf("bash %s: the script does not read %s", path, name)
		}
	}
	return nil
}
