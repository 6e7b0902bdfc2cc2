package wiretime_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/pixfoundry/payments/internal/wiretime"
)

// TestKeys checks that every time field the payments package and the HTTP adapter encode,
// a time.Time or *time.Time with a json tag, has its JSON name in wiretime.Keys: a time
// field added under a new name and not there would reach the wire with time.Time's digits.
func TestKeys(t *testing.T) {
	is := is.New(t)
	seen := 0
	for _, dir := range []string{"../..", "../../httpadapter"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		is.NoErr(err)
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			is.NoErr(err)
			ast.Inspect(f, func(n ast.Node) bool {
				field, ok := n.(*ast.Field)
				if !ok || field.Tag == nil || !isTime(field.Type) {
					return true
				}
				tag, err := strconv.Unquote(field.Tag.Value)
				is.NoErr(err)
				key, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if key == "" || key == "-" {
					return true
				}
				seen++
				if !wiretime.Keys[key] {
					t.Errorf("%s: time field %q is not in wiretime.Keys", fset.Position(field.Pos()), key)
				}
				return true
			})
		}
	}
	is.True(seen > 20) // the walk found the time fields
}

// isTime reports whether e is time.Time or *time.Time.
func isTime(e ast.Expr) bool {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Time" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "time"
}
