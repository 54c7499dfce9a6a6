package blocklagprom

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The collector's list of reasons is every Reason constant that the
// blocklag package it builds against declares, in the order declared, so
// that a reason added to blocklag cannot go without its counters. blocklag
// exports no list to range over, so the test type-checks its source,
// wherever the go command finds it.
func TestReasonsAreTheReasonsBlocklagDeclares(t *testing.T) {
	const path = "github.com/yermakovsa/failnext-blocklag"
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}{{range .GoFiles}}\n{{.}}{{end}}", path).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", path, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	dir, names := lines[0], lines[1:]
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", exportData(t, path))}
	pkg, err := conf.Check(path, fset, files, nil)
	if err != nil {
		t.Fatalf("type-checking %s: %v", path, err)
	}

	reason := pkg.Scope().Lookup("Reason")
	if reason == nil {
		t.Fatalf("%s declares no type Reason", path)
	}
	var consts []*types.Const
	for _, name := range pkg.Scope().Names() {
		if c, ok := pkg.Scope().Lookup(name).(*types.Const); ok && c.Exported() && types.Identical(c.Type(), reason.Type()) {
			consts = append(consts, c)
		}
	}
	slices.SortFunc(consts, func(a, b *types.Const) int { return cmp.Compare(a.Pos(), b.Pos()) })
	var declared, listed []string
	for _, c := range consts {
		declared = append(declared, constant.StringVal(c.Val()))
	}
	for _, r := range reasons {
		listed = append(listed, string(r))
	}
	if len(declared) == 0 || !slices.Equal(listed, declared) {
		t.Errorf("blocklag declares the reasons %q, but the collector lists %q", declared, listed)
	}
}

// exportData returns a lookup for the gc importer that opens the compiled
// export data of path's dependencies, as the go command builds them.
func exportData(t *testing.T, path string) func(string) (io.ReadCloser, error) {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}", path).Output()
	if err != nil {
		t.Fatalf("go list -export %s: %v", path, err)
	}
	files := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if pkg, file, ok := strings.Cut(line, "="); ok {
			files[pkg] = file
		}
	}
	return func(pkg string) (io.ReadCloser, error) {
		file, ok := files[pkg]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", pkg)
		}
		return os.Open(file)
	}
}
