package failnext

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// realAPI lists every exported declaration of the real failnext v0.6.0, in
// the normalised form that exportedAPI produces. The stand-in exports
// exactly these: none missing, nothing else, no signature changed.
var realAPI = map[string]bool{
	"const EventAttempt":                                                      true,
	"const EventCooldownSkip":                                                 true,
	"const EventReplayError":                                                  true,
	"const EventResult":                                                       true,
	"const PermissionAllow":                                                   true,
	"const PermissionDefer":                                                   true,
	"const PermissionDeny":                                                    true,
	"field AttemptError.Endpoint EndpointID":                                  true,
	"field AttemptError.Err error":                                            true,
	"field Config.AdditionalTriggerStatusCodes []int":                         true,
	"field Config.Base http.RoundTripper":                                     true,
	"field Config.Cooldown CooldownConfig":                                    true,
	"field Config.Eligible func(EndpointID) bool":                             true,
	"field Config.Endpoints []Endpoint":                                       true,
	"field Config.OnEvent func(context.Context, Event)":                       true,
	"field Config.PermissionPolicy func(*http.Request) Permission":            true,
	"field CooldownConfig.Disabled bool":                                      true,
	"field CooldownConfig.Duration time.Duration":                             true,
	"field CooldownConfig.Threshold int":                                      true,
	"field Endpoint.ID EndpointID":                                            true,
	"field Endpoint.URL string":                                               true,
	"field Event.Attempt int":                                                 true,
	"field Event.Endpoint EndpointID":                                         true,
	"field Event.Err error":                                                   true,
	"field Event.Kind EventKind":                                              true,
	"field Event.StatusCode int":                                              true,
	"field FailoverError.Attempts []AttemptError":                             true,
	"func (*FailoverError) Error() string":                                    true,
	"func (*FailoverError) Unwrap() error":                                    true,
	"func (*Transport) CloseIdleConnections()":                                true,
	"func (*Transport) RoundTrip(*http.Request) (*http.Response, error)":      true,
	"func New(Config) (*Transport, error)":                                    true,
	"func WithFailoverAllowed(context.Context) context.Context":               true,
	"func WithFailoverDenied(context.Context) context.Context":                true,
	"func WithPreferredEndpoint(context.Context, EndpointID) context.Context": true,
	"type AttemptError struct":                                                true,
	"type Config struct":                                                      true,
	"type CooldownConfig struct":                                              true,
	"type Endpoint struct":                                                    true,
	"type EndpointID string":                                                  true,
	"type Event struct":                                                       true,
	"type EventKind uint8":                                                    true,
	"type FailoverError struct":                                               true,
	"type Permission uint8":                                                   true,
	"type Transport struct":                                                   true,
	"var ErrNoUsableEndpoint":                                                 true,
	"var ErrUnknownEndpoint":                                                  true,
}

// exportedAPI lists the package's exported declarations, one line each,
// with parameter names dropped.
func exportedAPI(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	names, _ := filepath.Glob("*.go")
	var out []string
	expr := func(e ast.Expr) string {
		var b bytes.Buffer
		printer.Fprint(&b, fset, e)
		return b.String()
	}
	list := func(fl *ast.FieldList) []string {
		var types []string
		if fl == nil {
			return nil
		}
		for _, f := range fl.List {
			for range max(len(f.Names), 1) {
				types = append(types, expr(f.Type))
			}
		}
		return types
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				recv := ""
				if d.Recv != nil {
					recv = "(" + list(d.Recv)[0] + ") "
				}
				results := list(d.Type.Results)
				res := strings.Join(results, ", ")
				if len(results) > 1 {
					res = "(" + res + ")"
				}
				params := strings.Join(list(d.Type.Params), ", ")
				out = append(out, strings.TrimSpace("func "+recv+d.Name.Name+"("+params+") "+res))
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						st, isStruct := s.Type.(*ast.StructType)
						if !isStruct {
							out = append(out, "type "+s.Name.Name+" "+expr(s.Type))
							continue
						}
						out = append(out, "type "+s.Name.Name+" struct")
						for _, field := range st.Fields.List {
							for _, n := range field.Names {
								if n.IsExported() {
									out = append(out, "field "+s.Name.Name+"."+n.Name+" "+expr(field.Type))
								}
							}
						}
					case *ast.ValueSpec:
						keyword := map[token.Token]string{token.VAR: "var ", token.CONST: "const "}[d.Tok]
						for _, n := range s.Names {
							if n.IsExported() {
								out = append(out, keyword+n.Name)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestExportsExactlyTheRealAPI(t *testing.T) {
	api := exportedAPI(t)
	exported := make(map[string]bool, len(api))
	for _, decl := range api {
		if exported[decl] {
			t.Errorf("declares %q more than once", decl)
		}
		exported[decl] = true
		if !realAPI[decl] {
			t.Errorf("exports %q, which failnext v0.6.0 does not have", decl)
		}
	}
	missing := make([]string, 0)
	for decl := range realAPI {
		if !exported[decl] {
			missing = append(missing, decl)
		}
	}
	sort.Strings(missing)
	for _, decl := range missing {
		t.Errorf("lacks %q, which failnext v0.6.0 exports", decl)
	}
	if len(realAPI) != 47 {
		t.Errorf("the list of the real API has %d declarations, want 47", len(realAPI))
	}
}
