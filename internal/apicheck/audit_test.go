package apicheck

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"
)

// sdkSrc stands for a third-party SDK.
const sdkSrc = `package sdk
type T struct{ X int }
type Opt[V any] struct{ v V }
type Creds interface{ Get() T }
`

// fixtureSrc uses sdk types in every place the audit must see, and in
// unexported places it must not report.
const fixtureSrc = `package fix

import (
	"io"

	"example.com/sdk"
)

type Config struct {
	Creds  sdk.Creds
	hidden sdk.T
	Reader io.Reader
	Nested struct{ Deep []map[string]*sdk.T }
}

type inner struct{ Leak sdk.T }

func (inner) Method() chan sdk.T { return nil }

func New() inner { return inner{} }

type Iface interface{ M(func(sdk.T)) error }

type Alias = sdk.T

var V []sdk.Opt[string]

type G[P interface{ ~int | sdk.T }] struct{}

func (Config) Use(x sdk.T) {}

func (Config) helper(x sdk.T) {}

func unexported(sdk.T) {}

type Clean struct {
	N    int
	priv sdk.T
}

func (c *Clean) Err() error { return nil }
`

type fakeImporter struct{ sdk *types.Package }

func (f fakeImporter) Import(path string) (*types.Package, error) {
	if path == "example.com/sdk" {
		return f.sdk, nil
	}
	return importer.Default().Import(path)
}

func check(t *testing.T, path, src string, imp types.Importer) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path+".go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := (&types.Config{Importer: imp}).Check(path, fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// audit reports every exported use of a foreign type — struct fields
// (nested), methods, functions returning an unexported type whose API leaks
// one, interface methods, aliases, variables, type arguments and
// constraints — and nothing unexported or from the standard library.
func TestAudit(t *testing.T) {
	sdk := check(t, "example.com/sdk", sdkSrc, importer.Default())
	fix := check(t, module+"/fix", fixtureSrc, fakeImporter{sdk})
	want := []string{
		"fix.Alias: sdk.T from example.com/sdk",
		"fix.Config.Creds: sdk.Creds from example.com/sdk",
		"fix.Config.Nested.Deep: sdk.T from example.com/sdk",
		"fix.Config.Use: sdk.T from example.com/sdk",
		"fix.G: sdk.T from example.com/sdk",
		"fix.Iface.M: sdk.T from example.com/sdk",
		"fix.New.Leak: sdk.T from example.com/sdk",
		"fix.New.Method: sdk.T from example.com/sdk",
		"fix.V: sdk.Opt from example.com/sdk",
	}
	got := audit(fix)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
