package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestDocs runs or compiles every code block of README.md and docs/*.md, so that the docs
// cannot show a command or a program that does not work. A block is fenced and tagged:
//
//   - sh, console: shell. curl commands run against a fresh server of the file (-db memory:,
//     $APP_ID its App ID, set or not, http://127.0.0.1:9000 a receiver that answers 200) and must answer
//     2xx, or the status a trailing comment starts with ("# 400 ..."); go run
//     ./examples/server starts the server with the block's flags (a temporary database, a
//     fake PSP for -psp-*; a PostgreSQL URL when PAYMENTS_POSTGRES_URL is set, else the
//     flags are only checked), or, after "# exits N: message", checks it exits so; go test
//     checks its packages exist and its -run and -bench name tests that exist; bash runs
//     bash -n on the script and checks it reads the variables set before it. Anything
//     else fails, naming the command.
//   - go: compiled, all blocks in one module and one go build. A fragment (no package
//     clause) becomes the body of a function returning error; `...` lines mark what is left
//     out; HTML comments just before the fence give its imports and the names it assumes:
//     <!-- imports: context github.com/pixfoundry/payments -->, <!-- prelude: ctx := context.Background() -->.
//   - json: must parse (one value or JSON lines); text, http: output, only listed.
//
// An untagged or unknown block, or an indented code block, fails.
func TestDocs(t *testing.T) {
	is := is.New(t)
	root, err := filepath.Abs("../..")
	is.NoErr(err)
	blocks, problems, err := readDocBlocks(root)
	is.NoErr(err)
	for _, p := range problems {
		t.Error(p)
	}
	is.True(len(blocks) >= 10) // the docs have their blocks

	var goBlocks []docBlock
	shell := map[string][]docBlock{} // by file
	var files []string
	for _, b := range blocks {
		if err := checkTag(b); err != nil {
			t.Error(err)
			continue
		}
		switch b.info {
		case "go":
			goBlocks = append(goBlocks, b)
		case "sh", "console":
			if len(shell[b.file]) == 0 {
				files = append(files, b.file)
			}
			shell[b.file] = append(shell[b.file], b)
		case "json":
			if err := checkJSON(b.text); err != nil {
				t.Errorf("%s:%d: json block does not parse: %v", b.file, b.line, err)
			}
		}
	}

	// A file whose blocks export a variable sets it in the process (t.Setenv): its subtest
	// runs before the parallel ones, alone.
	sort.SliceStable(files, func(i, j int) bool { return exports(shell[files[i]]) && !exports(shell[files[j]]) })
	for _, file := range files {
		t.Run(strings.ReplaceAll(file, "/", "_"), func(t *testing.T) {
			if !exports(shell[file]) {
				t.Parallel()
			}
			sh := newDocShell(t, root, file)
			for _, b := range shell[file] {
				sh.runBlock(b)
			}
			sh.stopServers()
		})
	}
	t.Run("Go", func(t *testing.T) {
		t.Parallel()
		compileGoBlocks(t, root, goBlocks)
	})
}

// docBlock is a code block of a Markdown file.
type docBlock struct {
	file       string // relative to the repository root
	fence      int    // line of the opening fence
	line       int    // line of the first line of text
	info       string // the first word of the info string
	text       string
	directives map[string]string // from <!-- key: value --> lines just before the fence
}

var (
	fenceLine     = regexp.MustCompile("^( {0,3})(```+|~~~+)(.*)$")
	directiveLine = regexp.MustCompile(`^<!--\s*([a-z]+):\s*(.*?)\s*-->\s*$`)
	listItemLine  = regexp.MustCompile(`^( *)([-*+]|[0-9]+[.)])( +)\S`)
)

// readDocBlocks reads the fenced code blocks of README.md and docs/*.md. problems names
// what no block should be: an unclosed fence, an indented code block (whose language
// nobody can tell), an unknown directive.
func readDocBlocks(root string) (blocks []docBlock, problems []string, err error) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		name, _ := filepath.Rel(root, path)
		name = filepath.ToSlash(name)
		lines := strings.Split(string(data), "\n")
		directives := map[string]string{}
		prevBlank := true
		listOffset := -1 // the content column of the list the text is in, -1 outside a list
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			if m := fenceLine.FindStringSubmatch(l); m != nil {
				indent, fence := len(m[1]), m[2]
				closed := -1
				for j := i + 1; j < len(lines); j++ {
					if t := strings.TrimLeft(lines[j], " "); strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]+" ") == "" {
						closed = j
						break
					}
				}
				if closed < 0 {
					problems = append(problems, fmt.Sprintf("%s:%d: code block never closed", name, i+1))
					break
				}
				var text strings.Builder
				for _, c := range lines[i+1 : closed] {
					n := 0
					for n < indent && n < len(c) && c[n] == ' ' {
						n++
					}
					text.WriteString(c[n:] + "\n")
				}
				info, _, _ := strings.Cut(strings.TrimSpace(m[3]), " ")
				blocks = append(blocks, docBlock{file: name, fence: i + 1, line: i + 2, info: info, text: text.String(), directives: directives})
				directives = map[string]string{}
				i, prevBlank = closed, false
				continue
			}
			if m := directiveLine.FindStringSubmatch(l); m != nil {
				switch m[1] {
				case "imports", "prelude":
					directives[m[1]] = m[2]
				default:
					problems = append(problems, fmt.Sprintf("%s:%d: unknown directive %q (imports or prelude)", name, i+1, m[1]))
				}
				continue
			}
			if len(directives) > 0 {
				problems = append(problems, fmt.Sprintf("%s:%d: an imports or prelude comment must be just before a go block's fence", name, i))
				directives = map[string]string{}
			}
			trimmed := strings.TrimLeft(strings.ReplaceAll(l, "\t", "    "), " ")
			if trimmed == "" {
				prevBlank = true
				continue
			}
			indent := len(strings.ReplaceAll(l, "\t", "    ")) - len(trimmed)
			switch {
			case prevBlank && indent >= 4 && (listOffset < 0 || indent >= listOffset+4):
				problems = append(problems, fmt.Sprintf("%s:%d: indented code block: fence it with ``` and a language (sh, go, ...) so that TestDocs checks it", name, i+1))
				for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || strings.HasPrefix(lines[i+1], "    ") || strings.HasPrefix(lines[i+1], "\t")) {
					i++ // the rest of that block
				}
			case listItemLine.MatchString(l):
				m := listItemLine.FindStringSubmatch(l)
				listOffset = len(m[1]) + len(m[2]) + len(m[3])
			case indent == 0 && (prevBlank || strings.HasPrefix(l, "#")):
				listOffset = -1 // a paragraph or heading after the list
			}
			prevBlank = false
		}
	}
	return blocks, problems, nil
}

// checkTag says what is wrong with a block's tag: none, one TestDocs does not know, or
// directives on a block that is not Go.
func checkTag(b docBlock) error {
	switch b.info {
	case "go", "sh", "console", "json", "text", "http": // text and http: output and wire examples, only listed
	case "":
		return fmt.Errorf("%s:%d: code block without a language: tag it sh, console, go, json, text or http", b.file, b.fence)
	default:
		return fmt.Errorf("%s:%d: code block tagged %q, which TestDocs does not know: use sh, console, go, json, text or http, or teach docs_test.go the new one", b.file, b.fence, b.info)
	}
	if len(b.directives) > 0 && b.info != "go" {
		return fmt.Errorf("%s:%d: <!-- imports/prelude --> comments are for go blocks", b.file, b.fence)
	}
	return nil
}

// exports says whether a shell block of bs exports a variable.
func exports(bs []docBlock) bool {
	for _, b := range bs {
		for _, l := range strings.Split(b.text, "\n") {
			if strings.HasPrefix(strings.TrimPrefix(strings.TrimSpace(l), "$ "), "export ") {
				return true
			}
		}
	}
	return false
}

// checkJSON parses text as one JSON value or as JSON lines.
func checkJSON(text string) error {
	dec := json.NewDecoder(strings.NewReader(text))
	n := 0
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return errors.New("empty")
	}
	return nil
}

// compileGoBlocks builds every go block in one temporary module that uses this one through
// a replace directive: a whole file (with its package clause) as a package of its own, a
// fragment as the body of a function of package main. Line directives make the compiler
// name the doc's file and line.
func compileGoBlocks(t *testing.T, root string, blocks []docBlock) {
	is := is.New(t)
	is.True(len(blocks) > 0) // the docs have Go
	dir := t.TempDir()
	gomod := "module docblocks\n\ngo 1.26.0\n\nrequire github.com/pixfoundry/payments v0.0.0\n\nreplace github.com/pixfoundry/payments => " + root + "\n"
	is.NoErr(os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	is.NoErr(err)
	is.NoErr(os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	is.NoErr(os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	for i, b := range blocks {
		at := filepath.Join(root, b.file)
		if hasPackageClause(b.text) {
			sub := filepath.Join(dir, fmt.Sprintf("file%d", i))
			is.NoErr(os.MkdirAll(sub, 0o755))
			is.NoErr(os.WriteFile(filepath.Join(sub, "main.go"), []byte(fmt.Sprintf("//line %s:%d\n%s", at, b.line, b.text)), 0o644))
			continue
		}
		src := goFragment(i, at, b)
		is.NoErr(os.WriteFile(filepath.Join(dir, fmt.Sprintf("block%d.go", i)), []byte(src), 0o644))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(t), append(append([]string{"build"}, testBuildFlags()...), "./...")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the go blocks do not compile (%v):\n%s", err, out)
	}
}

// goFragment is the file for fragment block i: its imports, and a function whose body is the
// prelude, the block (a `...` line left out, as a blank line) and a use of every name it
// declares at its top level, since a snippet may show a result it does not go on to use.
func goFragment(i int, at string, b docBlock) string {
	var imports strings.Builder
	for _, p := range strings.Fields(b.directives["imports"]) {
		fmt.Fprintf(&imports, "\t%q\n", p)
	}
	var body strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(b.text, "\n"), "\n") {
		if strings.TrimSpace(l) == "..." {
			l = ""
		}
		body.WriteString(l + "\n")
	}
	head := fmt.Sprintf("package main\n\nimport (\n%s)\n\nfunc block%d() error {\n\t%s\n//line %s:%d\n", imports.String(), i, b.directives["prelude"], at, b.line)
	src := head + body.String() + "\treturn nil\n}\n"
	var uses strings.Builder
	if f, err := parser.ParseFile(token.NewFileSet(), "", src, 0); err == nil { // else go build says what is wrong
		for _, n := range declaredNames(f) {
			fmt.Fprintf(&uses, "\t_ = %s\n", n)
		}
	}
	return head + body.String() + fmt.Sprintf("//line %s.uses:1\n", at) + uses.String() + "\treturn nil\n}\n"
}

// declaredNames lists the variables the top level of f's first function declares.
func declaredNames(f *ast.File) []string {
	var names []string
	seen := map[string]bool{}
	add := func(id *ast.Ident) {
		if id.Name != "_" && !seen[id.Name] {
			seen[id.Name] = true
			names = append(names, id.Name)
		}
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		for _, s := range fn.Body.List {
			switch s := s.(type) {
			case *ast.AssignStmt:
				if s.Tok == token.DEFINE {
					for _, e := range s.Lhs {
						if id, ok := e.(*ast.Ident); ok {
							add(id)
						}
					}
				}
			case *ast.DeclStmt:
				if g, ok := s.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
					for _, sp := range g.Specs {
						for _, id := range sp.(*ast.ValueSpec).Names {
							add(id)
						}
					}
				}
			}
		}
		break
	}
	return names
}

// hasPackageClause says whether a go block is a whole file.
func hasPackageClause(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		return strings.HasPrefix(l, "package ")
	}
	return false
}

// goTool is the go command that runs this test.
// testBuildFlags are this test binary's own -race, if it has it: the blocks' build then
// finds the library compiled by the test's build, instead of compiling it all again.
func testBuildFlags() []string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return []string{"-race"}
			}
		}
	}
	return nil
}

func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go blocks need the go command: %v", err)
	}
	return p
}

// TestDocs_Checker: what TestDocs must refuse, it refuses: blocks it cannot classify or
// would not see, shell it cannot follow, go test lines naming what does not exist.
func TestDocs_Checker(t *testing.T) {
	t.Parallel()
	t.Run("Blocks", func(t *testing.T) {
		is := is.New(t)
		root := t.TempDir()
		is.NoErr(os.Mkdir(filepath.Join(root, "docs"), 0o755))
		readme := "# x\n\nText:\n\n    go run ./examples/server\n\n- a list\n\n  its second paragraph\n    continued\n\n```\nuntagged\n```\n\n```yaml\na: 1\n```\n"
		is.NoErr(os.WriteFile(filepath.Join(root, "README.md"), []byte(readme), 0o644))
		guide := "<!-- prelude: x := 1 -->\n\n```go\n_ = x\n```\n\n<!-- imports: fmt -->\n```sh\nls\n```\n\n```sh\nnever closed\n"
		is.NoErr(os.WriteFile(filepath.Join(root, "docs", "guide.md"), []byte(guide), 0o644))
		blocks, problems, err := readDocBlocks(root)
		is.NoErr(err)
		is.Equal(problems, []string{
			"README.md:5: indented code block: fence it with ``` and a language (sh, go, ...) so that TestDocs checks it",
			"docs/guide.md:1: an imports or prelude comment must be just before a go block's fence",
			"docs/guide.md:12: code block never closed",
		}) // the list's paragraph is no code block
		is.Equal(len(blocks), 4) // untagged, yaml, go, sh
		var tags []string
		for _, b := range blocks {
			if err := checkTag(b); err != nil {
				tags = append(tags, err.Error())
			}
		}
		is.Equal(len(tags), 3)                                                             // untagged, yaml, sh with imports
		is.True(strings.HasPrefix(tags[0], "README.md:12: code block without a language")) // at its fence
		is.True(strings.Contains(tags[1], `"yaml"`))
		is.True(strings.HasPrefix(tags[2], "docs/guide.md:8: <!-- imports/prelude --> comments are for go blocks"))
		is.Equal(len(blocks[2].directives), 0) // the comment was not just before
	})
	t.Run("Shell", func(t *testing.T) {
		is := is.New(t)
		stmts, err := parseShell("A='x y'   # set\ncurl -d '{\"a\":\n  1}' \\\n  -H \"X: $A\" localhost:8080/p  # 404 gone\nQ=$(curl -s u | cut -d'\"' -f2)\n", 10)
		is.NoErr(err)
		is.Equal(len(stmts), 3)
		is.Equal(stmts[0].line, 10)
		is.Equal(stmts[1].line, 11)
		is.Equal(stmts[1].comment, "404 gone")
		is.Equal(stmts[1].pipeline[0][2].literal(), "{\"a\":\n  1}") // a quote spans lines
		is.Equal(stmts[1].pipeline[0][4][1].variable, "A")
		is.Equal(stmts[2].line, 14)
		is.Equal(stmts[2].pipeline[0][0][1].subst, `curl -s u | cut -d'"' -f2`)
		for _, bad := range []string{"a; b", "a && b", "a > f", "echo `x`", "a 'open", "x=$(open"} {
			_, err := parseShell(bad, 1)
			is.True(err != nil) // refused, not misread
		}
	})
	t.Run("Run", func(t *testing.T) {
		is := is.New(t)
		root, err := filepath.Abs("../..")
		is.NoErr(err)
		sh := newDocShell(t, root, "x.md")
		run := func(script string) error {
			stmts, err := parseShell(script, 1)
			is.NoErr(err)
			is.Equal(len(stmts), 1)
			return sh.runStmt(stmts[0])
		}
		is.NoErr(run(`curl -s localhost:8080/api/v1/charge/nope -H "Authorization: $APP_ID"   # 400: no such charge`))
		is.True(run(`curl -s localhost:8080/api/v1/charge/nope -H "Authorization: $APP_ID"`) != nil)           // 2xx expected
		is.True(run(`curl -s localhost:8080/api/v1/account -H "Authorization: $APP_ID"   # 404 wrong`) != nil) // it answers 200
		is.NoErr(run(`go run ./examples/server -sandbox=false   # exits 2: -sandbox=false is for real payers`))
		is.True(run(`go run ./examples/server -sandbox=false   # exits 1: -sandbox=false`) != nil) // the status is 2
		is.True(run(`go run ./examples/server -nope`) != nil)
		is.True(run(`rm -rf /tmp/x`) != nil) // not a command TestDocs runs
		is.True(run(`curl -s example.com/`) != nil)
	})
	t.Run("GoTest", func(t *testing.T) {
		is := is.New(t)
		root, err := filepath.Abs("../..")
		is.NoErr(err)
		sh := &docShell{root: root}
		is.NoErr(sh.goTest([]string{"-run", "^$", "-bench", "Scale|CreateChargeCallers", "."}, []string{"PAYMENTS_SCALE=10"}))
		for _, bad := range []struct{ args, env []string }{
			{[]string{"./nowhere"}, nil},
			{[]string{"-bench", "Scale|NoSuchBenchmark", "."}, nil},
			{[]string{"-run", "TestNoSuchTest", "./examples/server"}, nil},
			{[]string{"."}, []string{"PAYMENTS_NO_SUCH_VARIABLE=1"}},
		} {
			is.True(sh.goTest(bad.args, bad.env) != nil) // refused
		}
	})
}
