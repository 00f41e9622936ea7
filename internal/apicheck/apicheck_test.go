package apicheck

import (
	"flag"
	"fmt"
	"go/types"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// module is strata's module path: types from packages under it are allowed.
const module = "github.com/strata-agent/strata"

// openTelemetryAPI are the one exemption: the OpenTelemetry API's provider
// interfaces, which issue 29 asks library users to pass in
// strata.Options.TracerProvider / MeterProvider (docs/telemetry.md). They
// are the vendor-neutral, stable (v1) API every tracing backend implements,
// the way an embedder hands any Go library its tracer; the SDK and the
// exporters stay out of every checked API.
var openTelemetryAPI = map[string]bool{
	"go.opentelemetry.io/otel/trace":  true,
	"go.opentelemetry.io/otel/metric": true,
}

// checked lists the packages whose exported API must not mention foreign
// types: every importable package of the module.
var checked = []string{
	module,
	module + "/acp",
	module + "/agent",
	module + "/cachesim",
	module + "/compact",
	module + "/config",
	module + "/event",
	module + "/hooks",
	module + "/mcp",
	module + "/prompt/...",
	module + "/session",
	module + "/session/postgres",
	module + "/session/storetest",
	module + "/telemetry",
	module + "/token",
	module + "/tool",
	module + "/trajectory",
	module + "/llm",
	module + "/llm/anthropic",
	module + "/llm/openai",
	module + "/llm/bedrock",
	module + "/llm/gemini",
	module + "/llm/replay",
}

// patterns overrides checked, e.g.
//
//	go test ./internal/apicheck -run TestNoForeignTypes -args -patterns=./...
//
// to survey packages not yet in the table (cmd/... and internal/... are
// skipped: they are not importable API).
var patterns = flag.String("patterns", "", "comma-separated package patterns to check instead of the table")

// TestNoForeignTypes loads the checked packages with go/packages (type
// information from the compiler's export data) and fails for every exported
// function or method signature, exported struct field, exported variable,
// constant or type, and interface method that refers to a type declared
// outside this module and the standard library. It walks through unexported
// types of this module that the API exposes (their exported fields and
// methods are reachable too).
func TestNoForeignTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("loads type information for every dependency; skipped with -short")
	}
	pats := checked
	if *patterns != "" {
		pats = strings.Split(*patterns, ",")
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: "../.."} // the module root
	pkgs, err := packages.Load(cfg, pats...)
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("packages failed to load (errors above)")
	}
	n := 0
	for _, p := range pkgs {
		if skipped(p.PkgPath) {
			continue
		}
		n++
		for _, v := range audit(p.Types) {
			t.Error(v)
		}
	}
	if n == 0 {
		t.Fatalf("no package matched %q", pats)
	}
}

func skipped(path string) bool {
	rel := strings.TrimPrefix(path, module)
	return strings.HasPrefix(rel, "/cmd/") || strings.HasPrefix(rel, "/internal/") || strings.HasSuffix(path, ".test") || strings.HasSuffix(path, "_test")
}

// audit returns one line per use of a foreign type in pkg's exported API,
// sorted: "pkg.Ident[.member]: <type> from <package>".
func audit(pkg *types.Package) []string {
	a := &auditor{seen: map[types.Type]bool{}, found: map[string]bool{}}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		where := pkg.Name() + "." + name
		switch o := obj.(type) {
		case *types.TypeName:
			if al, ok := o.Type().(*types.Alias); ok {
				a.walk(where, al)
				continue
			}
			a.named(where, o.Type())
		default: // Func, Var, Const
			a.walk(where, o.Type())
		}
	}
	out := make([]string, 0, len(a.found))
	for v := range a.found {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

type auditor struct {
	seen  map[types.Type]bool
	found map[string]bool
}

// named checks a named type of this module: its underlying type (exported
// struct fields, interface methods) and its exported methods.
func (a *auditor) named(where string, t types.Type) {
	if a.seen[t] {
		return
	}
	a.seen[t] = true
	n, ok := t.(*types.Named)
	if !ok {
		a.walk(where, t)
		return
	}
	a.walk(where, n.Underlying())
	for i := 0; i < n.TypeParams().Len(); i++ {
		a.walk(where, n.TypeParams().At(i).Constraint())
	}
	for i := 0; i < n.NumMethods(); i++ {
		if m := n.Method(i); m.Exported() {
			a.walk(where+"."+m.Name(), m.Type())
		}
	}
}

func (a *auditor) walk(where string, t types.Type) {
	switch t := t.(type) {
	case *types.Alias:
		if foreign(t.Obj().Pkg()) {
			a.report(where, t.Obj())
			return
		}
		a.walk(where, types.Unalias(t))
	case *types.Named:
		if foreign(t.Obj().Pkg()) {
			a.report(where, t.Obj())
		} else if t.Obj().Pkg() != nil && !t.Obj().Exported() {
			a.named(where, t) // exposed unexported type: its API is reachable
		}
		for i := 0; i < t.TypeArgs().Len(); i++ {
			a.walk(where, t.TypeArgs().At(i))
		}
	case *types.Pointer:
		a.walk(where, t.Elem())
	case *types.Slice:
		a.walk(where, t.Elem())
	case *types.Array:
		a.walk(where, t.Elem())
	case *types.Chan:
		a.walk(where, t.Elem())
	case *types.Map:
		a.walk(where, t.Key())
		a.walk(where, t.Elem())
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := 0; i < tup.Len(); i++ {
				a.walk(where, tup.At(i).Type())
			}
		}
		for i := 0; i < t.TypeParams().Len(); i++ {
			a.walk(where, t.TypeParams().At(i).Constraint())
		}
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			if f := t.Field(i); f.Exported() || f.Embedded() {
				a.walk(where+"."+f.Name(), f.Type())
			}
		}
	case *types.Interface:
		for i := 0; i < t.NumMethods(); i++ {
			if m := t.Method(i); m.Exported() {
				a.walk(where+"."+m.Name(), m.Type())
			}
		}
		for i := 0; i < t.NumEmbeddeds(); i++ {
			a.walk(where, t.EmbeddedType(i))
		}
	case *types.Union:
		for i := 0; i < t.Len(); i++ {
			a.walk(where, t.Term(i).Type())
		}
	case *types.TypeParam:
		a.walk(where, t.Constraint())
	}
}

func (a *auditor) report(where string, obj types.Object) {
	a.found[fmt.Sprintf("%s: %s.%s from %s", where, obj.Pkg().Name(), obj.Name(), obj.Pkg().Path())] = true
}

// foreign reports whether pkg is outside this module and the standard
// library (standard-library paths have no dot in their first element).
func foreign(pkg *types.Package) bool {
	if pkg == nil {
		return false // universe: error, comparable, any
	}
	p := pkg.Path()
	if p == module || strings.HasPrefix(p, module+"/") || openTelemetryAPI[p] {
		return false
	}
	first, _, _ := strings.Cut(p, "/")
	return strings.Contains(first, ".")
}
