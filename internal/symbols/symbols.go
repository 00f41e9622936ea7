// Package symbols extracts the declarations of source files with real
// parsers and formats them as the compact symbol map of the tiered-assembly
// design (docs/tiered.md, rule 3): a legend (abbreviation key and path
// aliases) and one block per file.
//
// Go is parsed with the standard library's go/parser (pure Go). Python,
// JavaScript, TypeScript (and TSX), Rust and Java are parsed with
// tree-sitter grammars through github.com/tree-sitter/go-tree-sitter, which
// needs cgo; a build without cgo parses Go only and reports the other
// languages as ErrUnsupported (the README, "Symbol map", gives the sizes
// that led to this choice).
//
// Parse is safe for concurrent use (each call uses its own parser).
package symbols

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// ErrUnsupported is returned for a file whose language has no parser in
// this build.
var ErrUnsupported = errors.New("symbols: unsupported language")

// Kind is the kind of a declaration, written as its one-letter abbreviation
// in the map (see Legend).
type Kind byte

// Declaration kinds.
const (
	Class     Kind = 'c' // class, struct, record
	Interface Kind = 'i' // interface, trait, protocol
	Enum      Kind = 'e'
	Type      Kind = 't' // type alias or other named type
	Function  Kind = 'f'
	Method    Kind = 'm' // function inside a class, impl or interface; constructor
	Variable  Kind = 'v' // module-level variable, constant or field
	Module    Kind = 'n' // namespace, module (Rust mod, TS namespace)
)

// Symbol is one declaration: its kind, name, parameter list as written
// (whitespace collapsed, "" when it has none), 1-based line, and members
// (methods and fields of a class, items of a module).
type Symbol struct {
	Kind     Kind
	Name     string
	Params   string
	Line     int
	Children []Symbol
}

// File is the symbols of one source file, in source order.
type File struct {
	Path     string // slash-separated, relative to the repository root
	Language string // "go", "python", "javascript", "typescript", "tsx", "rust" or "java"
	Symbols  []Symbol
}

// Language returns the language of p by its extension ("" = none known).
func Language(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".go":
		return "go"
	case ".py", ".pyi":
		return "python"
	case ".js", ".mjs", ".cjs", ".jsx":
		return "javascript"
	case ".ts", ".mts", ".cts":
		return "typescript"
	case ".tsx":
		return "tsx"
	case ".rs":
		return "rust"
	case ".java":
		return "java"
	}
	return ""
}

// Parse returns the declarations of src, the content of the file at p
// (slash-separated path; its extension chooses the language). It returns
// ErrUnsupported (wrapped, naming the path) for a language without a
// parser in this build. A file with syntax errors still yields the
// declarations the parser recovered.
func Parse(p string, src []byte) (*File, error) {
	lang := Language(p)
	var syms []Symbol
	var err error
	switch lang {
	case "go":
		syms, err = parseGo(p, src)
	case "":
		return nil, fmt.Errorf("%s: %w", p, ErrUnsupported)
	default:
		syms, err = parseTreeSitter(lang, src)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &File{Path: p, Language: lang, Symbols: syms}, nil
}

// maxParams caps a parameter list in the map, in bytes.
const maxParams = 60

// params collapses whitespace in a parameter list and shortens it to
// maxParams bytes (with "…").
func params(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.NewReplacer("( ", "(", ", )", ")", ",)", ")", " )", ")").Replace(s)
	if len(s) > maxParams {
		cut := maxParams
		for cut > 0 && (s[cut]&0xC0) == 0x80 {
			cut--
		}
		s = s[:cut] + "…)"
	}
	return s
}

// Block formats f as a map block: the path (shortened by aliases) followed
// by a colon, then one line per symbol, indented two spaces per level:
// kind letter, name, parameters, ":" and the line number.
//
//	@1/client.py:
//	  c Client:12
//	    m send(self, req):30
//	  f connect(url, timeout=5):80
func Block(f *File, aliases *Aliases) string {
	var b strings.Builder
	b.WriteString(aliases.Shorten(f.Path) + ":\n")
	var write func(syms []Symbol, depth int)
	write = func(syms []Symbol, depth int) {
		for _, s := range syms {
			b.WriteString(strings.Repeat("  ", depth+1))
			b.WriteByte(byte(s.Kind))
			b.WriteString(" " + s.Name + s.Params + ":" + strconv.Itoa(s.Line) + "\n")
			write(s.Children, depth+1)
		}
	}
	write(f.Symbols, 0)
	return b.String()
}
