package blocklagprom

import (
	"cmp"
	"go/ast"
	"go/build"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"

	blocklag "github.com/yermakovsa/failnext-blocklag"
)

// The collector's list of reasons is every Reason constant that the
// blocklag package compiled into this test declares, in the order
// declared, so that a reason added to blocklag cannot go without its
// counters. blocklag exports no list to range over, so the test reads
// that package's source.
func TestReasonsAreTheReasonsBlocklagDeclares(t *testing.T) {
	declared := declaredReasons(t, sourceDir(t))
	var listed []string
	for _, r := range reasons {
		listed = append(listed, string(r))
	}
	if len(declared) == 0 || !slices.Equal(listed, declared) {
		t.Errorf("blocklag declares the reasons %q, but the collector lists %q", declared, listed)
	}
}

// sourceDir returns the directory of the blocklag source that this test
// binary was built from, as the binary itself records it: the checkout that
// go.mod's replace points to here, the module cache under a user's
// "go test all". Asking the binary rather than the go command finds the
// very package compiled in, and needs no go command, no network and no
// module graph that resolves (from the module cache, this module's replace
// directories do not exist). Only a build with -trimpath records no
// directory, and then the test skips.
func sourceDir(t *testing.T) string {
	t.Helper()
	fn := runtime.FuncForPC(reflect.ValueOf(blocklag.New).Pointer())
	file, _ := fn.FileLine(fn.Entry())
	dir := filepath.Dir(file)
	if !filepath.IsAbs(file) {
		t.Skipf("this test binary records no source directory for blocklag (%q): built with -trimpath?", file)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("blocklag's source is not where this test binary was built from it: %v", err)
	}
	return dir
}

// declaredReasons type-checks the package in dir, without its imports
// (constants of a string type need none), and returns the value of every
// exported constant of its type Reason, in the order declared.
func declaredReasons(t *testing.T, dir string) []string {
	t.Helper()
	// ImportDir picks the package's files as the build does (no tests, and
	// only those the build constraints let in), without the go command.
	bp, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{
		Importer: noImports{},
		Error:    func(error) {}, // the imports' errors; what Reason needs still checks
	}
	pkg, _ := conf.Check("github.com/yermakovsa/failnext-blocklag", fset, files, nil)
	reason, ok := pkg.Scope().Lookup("Reason").(*types.TypeName)
	if !ok {
		t.Fatalf("the blocklag source in %s declares no type Reason", dir)
	}
	var consts []*types.Const
	for _, name := range pkg.Scope().Names() {
		if c, ok := pkg.Scope().Lookup(name).(*types.Const); ok && c.Exported() && types.Identical(c.Type(), reason.Type()) {
			consts = append(consts, c)
		}
	}
	slices.SortFunc(consts, func(a, b *types.Const) int { return cmp.Compare(a.Pos(), b.Pos()) })
	var out []string
	for _, c := range consts {
		if c.Val().Kind() != constant.String {
			t.Fatalf("%s is not a string constant: %v", c.Name(), c.Val())
		}
		out = append(out, constant.StringVal(c.Val()))
	}
	return out
}

// noImports refuses every import, so that type-checking needs nothing
// beyond the package's own files.
type noImports struct{}

func (noImports) Import(path string) (*types.Package, error) {
	return nil, os.ErrNotExist
}
