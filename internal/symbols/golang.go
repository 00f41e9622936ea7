package symbols

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// parseGo lists a Go file's top-level declarations with go/parser: types
// (struct → c, interface → i, other → t) with their methods and interface
// methods as members, functions, and package-level vars and consts.
// Methods whose receiver type is not declared in the file are listed at the
// top level as "m Recv.Name".
func parseGo(name string, src []byte) ([]Symbol, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if f == nil {
		return nil, err
	}
	line := func(p token.Pos) int { return fset.Position(p).Line }
	text := func(n ast.Node) string {
		a, b := fset.Position(n.Pos()).Offset, fset.Position(n.End()).Offset
		if a < 0 || b > len(src) || a > b {
			return ""
		}
		return string(src[a:b])
	}
	var out []Symbol
	types := map[string]int{} // type name → index in out
	var methods []*ast.FuncDecl
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil {
				methods = append(methods, d)
				continue
			}
			out = append(out, Symbol{Kind: Function, Name: d.Name.Name, Params: params(text(d.Type.Params)), Line: line(d.Pos())})
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					sym := Symbol{Kind: Type, Name: s.Name.Name, Line: line(s.Pos())}
					switch t := s.Type.(type) {
					case *ast.StructType:
						sym.Kind = Class
					case *ast.InterfaceType:
						sym.Kind = Interface
						for _, m := range t.Methods.List {
							for _, n := range m.Names {
								ft, _ := m.Type.(*ast.FuncType)
								p := ""
								if ft != nil {
									p = params(text(ft.Params))
								}
								sym.Children = append(sym.Children, Symbol{Kind: Method, Name: n.Name, Params: p, Line: line(n.Pos())})
							}
						}
					}
					types[s.Name.Name] = len(out)
					out = append(out, sym)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							out = append(out, Symbol{Kind: Variable, Name: n.Name, Line: line(n.Pos())})
						}
					}
				}
			}
		}
	}
	for _, m := range methods {
		recv := receiver(m.Recv.List[0].Type)
		sym := Symbol{Kind: Method, Name: m.Name.Name, Params: params(text(m.Type.Params)), Line: line(m.Pos())}
		if i, ok := types[recv]; ok {
			out[i].Children = append(out[i].Children, sym)
			continue
		}
		sym.Name = recv + "." + sym.Name
		out = append(out, sym)
	}
	return out, nil
}

// receiver returns the type name of a method receiver (T, *T, T[K], *T[K]).
func receiver(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return strings.TrimSpace("?")
		}
	}
}
