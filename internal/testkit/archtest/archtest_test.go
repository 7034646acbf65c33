// Package archtest holds the product's code to the shape CONTRIBUTING.md
// promises: short functions, simple branching, layers that import only
// downwards, and a thin command line.
package archtest

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit"
)

// The limits every production function keeps: a function longer than
// maxLines or with more than maxComplexity independent paths is split into
// named steps.
const (
	maxLines      = 80
	maxComplexity = 20
)

// function is one function or method of the product's code.
type function struct {
	name       string // package.Func or package.(Type).Method
	pos        string // file:line, from the repository's root
	lines      int
	complexity int
}

// productFunctions parses every non-test Go file of cmd/ and internal/,
// leaving out the test kit.
func productFunctions(t *testing.T) []function {
	t.Helper()
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	var out []function
	fset := token.NewFileSet()
	for _, rel := range productFiles(t, root) {
		file, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			begin, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			out = append(out, function{
				name:       file.Name.Name + "." + funcName(fn),
				pos:        fmt.Sprintf("%s:%d", rel, begin.Line),
				lines:      end.Line - begin.Line + 1,
				complexity: complexity(fn),
			})
		}
	}
	if len(out) < 100 {
		t.Fatalf("found only %d functions under %s: is the walk wrong?", len(out), root)
	}
	return out
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	if idx, ok := recv.(*ast.IndexExpr); ok {
		recv = idx.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}

// complexity is the cyclomatic complexity as gocyclo counts it: one, plus
// one for each if, for, range, non-default case, non-default select case,
// && and ||, function literals included.
func complexity(fn *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}

// TestFunctionsStaySmall fails on a production function over the limits and
// prints the ten longest and the ten most complex, so their trend is
// visible in every CI log.
func TestFunctionsStaySmall(t *testing.T) {
	fns := productFunctions(t)
	for _, f := range fns {
		if f.lines > maxLines {
			t.Errorf("%s: %s is %d lines, over %d: split it into named steps", f.pos, f.name, f.lines, maxLines)
		}
		if f.complexity > maxComplexity {
			t.Errorf("%s: %s has cyclomatic complexity %d, over %d: split it into named steps", f.pos, f.name, f.complexity, maxComplexity)
		}
	}
	slices.SortFunc(fns, func(a, b function) int { return cmp.Or(b.lines-a.lines, strings.Compare(a.pos, b.pos)) })
	var b strings.Builder
	fmt.Fprintf(&b, "the longest of %d production functions (limit %d lines):\n", len(fns), maxLines)
	for _, f := range fns[:min(10, len(fns))] {
		fmt.Fprintf(&b, "  %4d lines  %-45s %s\n", f.lines, f.name, f.pos)
	}
	slices.SortFunc(fns, func(a, b function) int { return cmp.Or(b.complexity-a.complexity, strings.Compare(a.pos, b.pos)) })
	fmt.Fprintf(&b, "the most complex (limit %d):\n", maxComplexity)
	for _, f := range fns[:min(10, len(fns))] {
		fmt.Fprintf(&b, "  %4d        %-45s %s\n", f.complexity, f.name, f.pos)
	}
	t.Log("\n" + b.String())
}
