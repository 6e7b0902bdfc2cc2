package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestREADME_Tour runs the README's tour over HTTP as a reader would paste it: every curl
// command of its first sh block, against a fresh server (-db memory:), the App ID the
// server printed in $APP_ID and the webhook's receiver on this machine. Each must answer
// 2xx. The README then cannot show a command that does not work.
func TestREADME_Tour(t *testing.T) {
	is := is.New(t)
	readme, err := os.ReadFile("../../README.md")
	is.NoErr(err)
	_, tour, ok := strings.Cut(string(readme), "## A five-minute tour")
	is.True(ok)
	_, block, ok := strings.Cut(tour, "```sh\n")
	is.True(ok)
	block, _, ok = strings.Cut(block, "```")
	is.True(ok)
	cmds := curlCommands(block)
	is.True(len(cmds) >= 5) // the tour has its commands

	srv := start(t, "-db", "memory:")
	m := appIDLine.FindStringSubmatch(srv.stdout.String())
	is.True(m != nil)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer hook.Close()

	for _, args := range cmds {
		var method, url, body string
		header := http.Header{}
		for i := 0; i < len(args); i++ {
			switch a := args[i]; a {
			case "curl", "-s":
			case "-X":
				i++
				method = args[i]
			case "-H":
				i++
				name, value, _ := strings.Cut(args[i], ":")
				header.Set(name, strings.TrimSpace(value))
			case "-d":
				i++
				body = args[i]
			default:
				url = a
			}
		}
		if method == "" {
			method = "GET"
			if body != "" {
				method = "POST"
			}
		}
		url = "http://" + strings.TrimPrefix(strings.Replace(url, "localhost:8080", strings.TrimPrefix(srv.base, "http://"), 1), "http://")
		body = strings.ReplaceAll(body, "http://127.0.0.1:9000/hook", hook.URL+"/hook")
		for name := range header {
			header.Set(name, strings.ReplaceAll(header.Get(name), "$APP_ID", m[1]))
		}
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		is.NoErr(err)
		req.Header = header
		res, err := client.Do(req)
		is.NoErr(err)
		reply, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			t.Errorf("README: %s %s: %d %s", method, url, res.StatusCode, reply)
		}
	}
}

// curlCommands reads the curl commands of a sh block: lines joined at a trailing
// backslash, comments dropped, each split into words as sh would for the quoting the
// README uses ('...' and "...").
func curlCommands(block string) [][]string {
	var cmds [][]string
	var line string
	for _, l := range strings.Split(block, "\n") {
		if strings.HasSuffix(l, "\\") {
			line += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		line += l
		if words := shellWords(line); len(words) > 0 && words[0] == "curl" {
			cmds = append(cmds, words)
		}
		line = ""
	}
	return cmds
}

// shellWords splits s into words at unquoted spaces, dropping an unquoted # and what
// follows; quotes are removed, and $VAR is left for the caller to fill in.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '#' && !inWord:
			i = len(s)
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// TestREADME_GoTourIsEmbedded: every line of the README's Go tour but "..." is a line of
// examples/embedded/main.go, which compiles and whose test runs it: the snippet cannot
// drift from a program that works.
func TestREADME_GoTourIsEmbedded(t *testing.T) {
	is := is.New(t)
	readme, err := os.ReadFile("../../README.md")
	is.NoErr(err)
	program, err := os.ReadFile("../embedded/main.go")
	is.NoErr(err)
	have := map[string]bool{}
	for _, l := range strings.Split(string(program), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	_, tour, ok := strings.Cut(string(readme), "### In Go")
	is.True(ok)
	_, block, ok := strings.Cut(tour, "```go\n")
	is.True(ok)
	block, _, ok = strings.Cut(block, "```")
	is.True(ok)
	n := 0
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l != "" && l != "..." { // ... marks lines left out
			n++
			if !have[l] {
				t.Errorf("README's Go tour: %q is not a line of examples/embedded/main.go", l)
			}
		}
	}
	is.True(n > 10) // the tour has its code
}
