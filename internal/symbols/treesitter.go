//go:build cgo

package symbols

import (
	"fmt"
	"strings"
	"unsafe"

	sitter "github.com/tree-sitter/go-tree-sitter"
	tsjava "github.com/tree-sitter/tree-sitter-java/bindings/go"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tspython "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tsrust "github.com/tree-sitter/tree-sitter-rust/bindings/go"
	tsts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// decl says how a grammar node kind becomes a Symbol: its kind (inClass
// turns functions into methods), the field path of its name, the field of
// its parameters, and the field whose children are its members.
type decl struct {
	kind   Kind
	name   []string // field path to the name node ("" = the node's first named child)
	params string
	body   string
}

// grammar is a language's parser entry point, the node kinds that declare
// symbols, and the kinds walked through (export wrappers, declaration
// lists) without being symbols themselves.
type grammar struct {
	lang  func() unsafe.Pointer
	decls map[string]decl
	pass  map[string]bool
}

var (
	jsDecls = map[string]decl{
		"class_declaration":              {Class, []string{"name"}, "", "body"},
		"abstract_class_declaration":     {Class, []string{"name"}, "", "body"},
		"class":                          {Class, []string{"name"}, "", "body"}, // module.exports = class X {…}
		"function_declaration":           {Function, []string{"name"}, "parameters", ""},
		"generator_function_declaration": {Function, []string{"name"}, "parameters", ""},
		"function_signature":             {Function, []string{"name"}, "parameters", ""},
		"method_definition":              {Method, []string{"name"}, "parameters", ""},
		"method_signature":               {Method, []string{"name"}, "parameters", ""},
		"abstract_method_signature":      {Method, []string{"name"}, "parameters", ""},
		"variable_declarator":            {Variable, []string{"name"}, "", ""},
		"field_definition":               {Variable, []string{"property"}, "", ""},
		"public_field_definition":        {Variable, []string{"name"}, "", ""},
		"property_signature":             {Variable, []string{"name"}, "", ""},
		"interface_declaration":          {Interface, []string{"name"}, "", "body"},
		"type_alias_declaration":         {Type, []string{"name"}, "", ""},
		"enum_declaration":               {Enum, []string{"name"}, "", ""},
		"internal_module":                {Module, []string{"name"}, "", "body"},
		"module":                         {Module, []string{"name"}, "", "body"},
	}
	jsPass = map[string]bool{"export_statement": true, "lexical_declaration": true, "variable_declaration": true,
		"ambient_declaration": true, "expression_statement": true, "assignment_expression": true}

	grammars = map[string]grammar{
		"python": {lang: tspython.Language, decls: map[string]decl{
			"class_definition":    {Class, []string{"name"}, "", "body"},
			"function_definition": {Function, []string{"name"}, "parameters", ""},
			"assignment":          {Variable, []string{"left"}, "", ""},
		}, pass: map[string]bool{"decorated_definition": true, "expression_statement": true}},
		"javascript": {lang: tsjs.Language, decls: jsDecls, pass: jsPass},
		"typescript": {lang: tsts.LanguageTypescript, decls: jsDecls, pass: jsPass},
		"tsx":        {lang: tsts.LanguageTSX, decls: jsDecls, pass: jsPass},
		"rust": {lang: tsrust.Language, decls: map[string]decl{
			"function_item":           {Function, []string{"name"}, "parameters", ""},
			"function_signature_item": {Function, []string{"name"}, "parameters", ""},
			"struct_item":             {Class, []string{"name"}, "", ""},
			"union_item":              {Class, []string{"name"}, "", ""},
			"enum_item":               {Enum, []string{"name"}, "", ""},
			"trait_item":              {Interface, []string{"name"}, "", "body"},
			"impl_item":               {Type, []string{"type"}, "", "body"},
			"mod_item":                {Module, []string{"name"}, "", "body"},
			"const_item":              {Variable, []string{"name"}, "", ""},
			"static_item":             {Variable, []string{"name"}, "", ""},
			"type_item":               {Type, []string{"name"}, "", ""},
			"macro_definition":        {Function, []string{"name"}, "", ""},
		}},
		"java": {lang: tsjava.Language, decls: map[string]decl{
			"class_declaration":           {Class, []string{"name"}, "", "body"},
			"record_declaration":          {Class, []string{"name"}, "parameters", "body"},
			"interface_declaration":       {Interface, []string{"name"}, "", "body"},
			"annotation_type_declaration": {Interface, []string{"name"}, "", "body"},
			"enum_declaration":            {Enum, []string{"name"}, "", "body"},
			"method_declaration":          {Method, []string{"name"}, "parameters", ""},
			"constructor_declaration":     {Method, []string{"name"}, "parameters", ""},
			"field_declaration":           {Variable, []string{"declarator", "name"}, "", ""},
			"constant_declaration":        {Variable, []string{"declarator", "name"}, "", ""},
		}, pass: map[string]bool{"enum_body_declarations": true}},
	}
)

// parseTreeSitter parses src with the language's tree-sitter grammar and
// walks its declarations.
func parseTreeSitter(lang string, src []byte) ([]Symbol, error) {
	g, ok := grammars[lang]
	if !ok {
		return nil, ErrUnsupported
	}
	p := sitter.NewParser()
	defer p.Close()
	if err := p.SetLanguage(sitter.NewLanguage(g.lang())); err != nil {
		return nil, fmt.Errorf("load %s grammar: %w", lang, err)
	}
	tree := p.Parse(src, nil)
	if tree == nil {
		return nil, fmt.Errorf("tree-sitter returned no tree for %s source", lang)
	}
	defer tree.Close()
	w := walker{g: g, src: src, rust: lang == "rust"}
	syms := w.walk(tree.RootNode(), false)
	if w.rust {
		syms = mergeImpls(syms)
	}
	return syms, nil
}

type walker struct {
	g    grammar
	src  []byte
	rust bool
}

// walk returns the symbols declared by n's named children.
func (w walker) walk(n *sitter.Node, inClass bool) []Symbol {
	var out []Symbol
	for i := uint(0); i < n.NamedChildCount(); i++ {
		c := n.NamedChild(i)
		if c == nil {
			continue
		}
		k := c.Kind()
		if w.g.pass[k] {
			out = append(out, w.walk(c, inClass)...)
			continue
		}
		d, ok := w.g.decls[k]
		if !ok {
			continue
		}
		name := w.name(c, d.name)
		if name == "" {
			continue
		}
		if k == "impl_item" {
			name = "impl " + name
		}
		s := Symbol{Kind: d.kind, Name: name, Line: int(c.StartPosition().Row) + 1}
		if s.Kind == Function && inClass {
			s.Kind = Method
		}
		if d.params != "" {
			if p := c.ChildByFieldName(d.params); p != nil {
				s.Params = params(p.Utf8Text(w.src))
			}
		}
		if k == "variable_declarator" {
			if v := c.ChildByFieldName("value"); v != nil {
				switch v.Kind() {
				case "arrow_function", "function_expression", "function", "generator_function":
					s.Kind = Function
					if p := v.ChildByFieldName("parameters"); p != nil {
						s.Params = params(p.Utf8Text(w.src))
					} else if p := v.ChildByFieldName("parameter"); p != nil {
						s.Params = "(" + p.Utf8Text(w.src) + ")"
					}
				case "class":
					s.Kind = Class
					if b := v.ChildByFieldName("body"); b != nil {
						s.Children = w.walk(b, true)
					}
				}
			}
		}
		if d.body != "" {
			if b := c.ChildByFieldName(d.body); b != nil {
				members := s.Kind == Class || s.Kind == Interface || s.Kind == Enum || (w.rust && k == "impl_item")
				s.Children = w.walk(b, members)
			}
		}
		out = append(out, s)
	}
	return out
}

// name follows the field path from n and returns the node's text; Python
// assignments and JS declarators count only when the target is a plain
// identifier (not a destructuring or attribute).
func (w walker) name(n *sitter.Node, path []string) string {
	for _, f := range path {
		if n = n.ChildByFieldName(f); n == nil {
			return ""
		}
	}
	switch n.Kind() {
	case "identifier", "type_identifier", "property_identifier", "private_property_identifier", "field_identifier",
		"string", "number", "computed_property_name", "nested_identifier", "scoped_type_identifier", "generic_type",
		"primitive_type", "scoped_identifier", "reference_type", "array_type", "tuple_type":
		return strings.Join(strings.Fields(n.Utf8Text(w.src)), " ")
	}
	return ""
}

// mergeImpls moves the members of each Rust impl block ("impl Type") into
// the struct, enum or trait of the same name declared in the file; an impl
// of a type declared elsewhere stays as "impl Type".
func mergeImpls(syms []Symbol) []Symbol {
	byName := map[string]int{}
	var out []Symbol
	var impls []Symbol
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "impl ") {
			impls = append(impls, s)
			continue
		}
		if s.Kind == Class || s.Kind == Enum || s.Kind == Interface {
			byName[s.Name] = len(out)
		}
		out = append(out, s)
	}
	for _, s := range impls {
		base := strings.TrimPrefix(s.Name, "impl ")
		if i := strings.IndexByte(base, '<'); i > 0 {
			base = base[:i]
		}
		if i, ok := byName[base]; ok {
			out[i].Children = append(out[i].Children, s.Children...)
			continue
		}
		out = append(out, s)
	}
	return out
}
