package main

import (
	"fmt"
	"regexp"
	"strings"
)

// A shell statement: a pipeline of commands, each a list of words, with the statement's
// trailing comment.
type (
	shStmt struct {
		line     int // of its first word
		source   string
		pipeline []shCmd
		comment  string
	}
	shCmd  []shWord
	shWord []shPart
	shPart struct {
		lit      string // literal text
		variable string // $NAME or ${NAME}
		subst    string // $(...), unparsed
	}
)

// literal is the word's text when it has no expansion.
func (w shWord) literal() string {
	var s strings.Builder
	for _, p := range w {
		if p.variable != "" || p.subst != "" {
			return ""
		}
		s.WriteString(p.lit)
	}
	return s.String()
}

var assignmentWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// isAssignment says whether the word is NAME=value.
func (w shWord) isAssignment() bool {
	return len(w) > 0 && w[0].variable == "" && w[0].subst == "" && assignmentWord.MatchString(w[0].lit)
}

// parseShell splits a shell script into statements as sh reads them: lines joined at a
// trailing backslash or an open quote, words split at unquoted blanks, '...' and "..."
// quoting, $NAME, ${NAME} and $(...) expansions, # comments and | pipelines. Other syntax
// (;, &&, redirections, backquotes) is an error, so that no block does what the test cannot
// follow. line is the line number of the script's first line.
func parseShell(src string, line int) ([]shStmt, error) {
	var (
		stmts  []shStmt
		st     = shStmt{line: -1}
		cmd    shCmd
		word   shWord
		lit    strings.Builder
		inWord bool
		start  int
	)
	flushLit := func() {
		if lit.Len() > 0 {
			word = append(word, shPart{lit: lit.String()})
			lit.Reset()
		}
	}
	begin := func(i int) {
		if st.line < 0 {
			st.line, start = line, i
		}
		inWord = true
	}
	endWord := func() {
		flushLit()
		if inWord {
			cmd = append(cmd, word)
		}
		word, inWord = nil, false
	}
	endCmd := func() error {
		endWord()
		if len(cmd) == 0 {
			return fmt.Errorf("line %d: a | with no command on one side", line)
		}
		st.pipeline = append(st.pipeline, cmd)
		cmd = nil
		return nil
	}
	endStmt := func(i int) error {
		endWord()
		if len(cmd) > 0 || len(st.pipeline) > 0 {
			if err := endCmd(); err != nil {
				return err
			}
			st.source = strings.TrimSpace(src[start:i])
			stmts = append(stmts, st)
		}
		st = shStmt{line: -1}
		return nil
	}
	// dollar reads an expansion at src[i] == '$' and returns the index of its last byte.
	dollar := func(i int) (int, error) {
		rest := src[i+1:]
		switch {
		case strings.HasPrefix(rest, "("):
			depth, quote := 0, byte(0)
			for j := 0; j < len(rest); j++ {
				c := rest[j]
				switch {
				case quote != 0:
					if c == quote {
						quote = 0
					}
				case c == '\'' || c == '"':
					quote = c
				case c == '(':
					depth++
				case c == ')':
					depth--
					if depth == 0 {
						flushLit()
						word = append(word, shPart{subst: rest[1:j]})
						return i + 1 + j, nil
					}
				}
			}
			return 0, fmt.Errorf("line %d: $( never closed", line)
		case strings.HasPrefix(rest, "{"):
			end := strings.IndexByte(rest, '}')
			if end < 0 || !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(rest[1:end]) {
				return 0, fmt.Errorf("line %d: only ${NAME} is supported", line)
			}
			flushLit()
			word = append(word, shPart{variable: rest[1:end]})
			return i + 1 + end, nil
		default:
			n := 0
			for n < len(rest) && (rest[n] == '_' || rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= 'a' && rest[n] <= 'z' || n > 0 && rest[n] >= '0' && rest[n] <= '9') {
				n++
			}
			if n == 0 {
				lit.WriteByte('$')
				return i, nil
			}
			flushLit()
			word = append(word, shPart{variable: rest[:n]})
			return i + n, nil
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i++
			line++
		case c == '\\' && i+1 < len(src):
			begin(i)
			lit.WriteByte(src[i+1])
			i++
		case c == '\'':
			begin(i)
			end := strings.IndexByte(src[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("line %d: ' never closed", line)
			}
			lit.WriteString(src[i+1 : i+1+end])
			line += strings.Count(src[i+1:i+1+end], "\n")
			i += 1 + end
		case c == '"':
			begin(i)
			closed := false
			for i++; i < len(src); i++ {
				c := src[i]
				if c == '"' {
					closed = true
					break
				}
				switch {
				case c == '\\' && i+1 < len(src) && strings.IndexByte("\"\\$`", src[i+1]) >= 0:
					lit.WriteByte(src[i+1])
					i++
				case c == '$':
					end, err := dollar(i)
					if err != nil {
						return nil, err
					}
					i = end
				case c == '`':
					return nil, fmt.Errorf("line %d: backquotes are not supported, use $(...)", line)
				default:
					if c == '\n' {
						line++
					}
					lit.WriteByte(c)
				}
			}
			if !closed {
				return nil, fmt.Errorf(`line %d: " never closed`, line)
			}
		case c == '$':
			begin(i)
			end, err := dollar(i)
			if err != nil {
				return nil, err
			}
			i = end
		case c == '#' && !inWord:
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			if st.line >= 0 || len(cmd) > 0 {
				st.comment = strings.TrimSpace(src[i+1 : i+end])
			}
			if err := endStmt(i); err != nil {
				return nil, err
			}
			i += end - 1
		case c == ' ' || c == '\t':
			endWord()
		case c == '\n':
			if err := endStmt(i); err != nil {
				return nil, err
			}
			line++
		case c == '|' && !(i+1 < len(src) && src[i+1] == '|'):
			if err := endCmd(); err != nil {
				return nil, err
			}
		case strings.IndexByte(";&|<>()`", c) >= 0:
			return nil, fmt.Errorf("line %d: %q: TestDocs reads one command or pipeline a line (no ;, &&, ||, redirections or subshells)", line, c)
		default:
			begin(i)
			lit.WriteByte(c)
		}
	}
	if err := endStmt(len(src)); err != nil {
		return nil, err
	}
	return stmts, nil
}
