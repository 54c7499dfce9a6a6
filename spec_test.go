package blocklag

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sourceFiles parses the package's non-test Go files.
func sourceFiles(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// S-M1
func TestModuleAndDependencies(t *testing.T) {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var requires []string
	inBlock := false
	for _, line := range strings.Split(string(mod), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			inBlock = true
		case inBlock && line == ")":
			inBlock = false
		case inBlock && line != "" && !strings.HasPrefix(line, "//"):
			requires = append(requires, line)
		case strings.HasPrefix(line, "require "):
			requires = append(requires, strings.TrimPrefix(line, "require "))
		}
	}
	if !strings.Contains(string(mod), "module github.com/yermakovsa/failnext-blocklag\n") ||
		!strings.Contains(string(mod), "\ngo 1.24\n") {
		t.Errorf("go.mod does not declare the module path and go 1.24:\n%s", mod)
	}
	if len(requires) != 1 || requires[0] != "github.com/yermakovsa/failnext v0.6.0" {
		t.Errorf("go.mod requires %q, want failnext v0.6.0 only", requires)
	}

	_, files := sourceFiles(t)
	for _, f := range files {
		if f.Name.Name != "blocklag" {
			t.Errorf("package %s, want blocklag", f.Name.Name)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(strings.Split(path, "/")[0], ".") && path != "github.com/yermakovsa/failnext" {
				t.Errorf("imports %s: only the standard library and failnext are allowed", path)
			}
		}
	}
}

// S-M2
func TestLayout(t *testing.T) {
	for _, name := range []string{
		"blocklag.go", "config.go", "probe.go", "snapshot.go",
		"blocklag_test.go", "example_test.go", "README.md", "LICENSE",
		"examples/goethereum/go.mod",
	} {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("missing %s", name)
		}
	}
	if lic, _ := os.ReadFile("LICENSE"); !strings.HasPrefix(string(lic), "MIT License") {
		t.Error("LICENSE is not the MIT license")
	}
}

// S-D1: README.md covers each topic the contract lists.
func TestReadmeCoversTheContract(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{
		"## Why", "## Quick start", "## How a check works", "reference - height <= MaxLag",
		"## When checks fail", "## Concurrency and limits", "## Relative, not canonical",
		"## Eligible is not routing", "## Base", "## What it does not do",
		"## Examples", "## Installation", "Go 1.24", "## Testing", "## License",
		"## ProbeTimeout", "## Quorum",
	} {
		if !strings.Contains(string(readme), topic) {
			t.Errorf("README.md lacks %q", topic)
		}
	}
}

// S-D1: the README's complete programs compile against this module.
func TestReadmeProgramsCompile(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(readme), "```go\n")[1:]
	built := 0
	for _, block := range blocks {
		src, _, _ := strings.Cut(block, "```")
		if !strings.HasPrefix(src, "package main") {
			continue
		}
		// Inside the module directory, so that the program resolves blocklag
		// and failnext as this module does; the leading _ keeps ./... away.
		dir, err := os.MkdirTemp(".", "_readme")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(goTool, "build", "-o", os.DevNull, "./"+filepath.Base(dir)).CombinedOutput()
		if err != nil {
			t.Errorf("a README program does not compile: %v\n%s", err, out)
		}
		built++
	}
	if built == 0 {
		t.Error("README.md has no complete program")
	}
}

// S-D2
func TestExportedIdentifiersAreDocumented(t *testing.T) {
	fset, files := sourceFiles(t)
	pkg, err := doc.NewFromFiles(fset, files, "github.com/yermakovsa/failnext-blocklag")
	if err != nil {
		t.Fatal(err)
	}
	if pkg.Doc == "" {
		t.Error("the package has no doc comment")
	}
	undocumented := func(name, text string) {
		if strings.TrimSpace(text) == "" {
			t.Errorf("%s has no doc comment", name)
		}
	}
	for _, f := range pkg.Funcs {
		undocumented(f.Name, f.Doc)
	}
	for _, typ := range pkg.Types {
		undocumented(typ.Name, typ.Doc)
		for _, f := range append(typ.Funcs, typ.Methods...) {
			if f.Name != "Error" { // Error satisfies the error interface and says nothing new
				undocumented(typ.Name+"."+f.Name, f.Doc)
			}
		}
		for _, spec := range typ.Decl.Specs {
			st, ok := spec.(*ast.TypeSpec).Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, field := range st.Fields.List {
				for _, n := range field.Names {
					if n.IsExported() {
						undocumented(typ.Name+"."+n.Name, field.Doc.Text())
					}
				}
			}
		}
	}
	for _, v := range append(pkg.Vars, pkg.Consts...) {
		for _, n := range v.Names {
			if token.IsExported(n) {
				undocumented(n, v.Doc)
			}
		}
	}
}
