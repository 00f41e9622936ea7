package symbols

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Go files are parsed with go/parser: a real file of this module.
func TestParseGoSource(t *testing.T) {
	src, err := os.ReadFile("../../prompt/prompt.go")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("prompt/prompt.go", src)
	if err != nil {
		t.Fatal(err)
	}
	b := Block(f, nil)
	for _, w := range []string{"\n  c Context:", "\n    m Tokens(s string):", "\n  i Layout:", "\n    m Assemble(c *Context):",
		"\n  f Register(name string, newLayout func() Layout):", "\n  v layouts:"} {
		if !strings.Contains(b, w) {
			t.Errorf("block lacks %q:\n%s", w, b)
		}
	}
}

func TestUnsupportedLanguage(t *testing.T) {
	if _, err := Parse("README.md", []byte("# hi")); !errors.Is(err, ErrUnsupported) {
		t.Errorf("err = %v, want ErrUnsupported", err)
	}
}

// The legend is the abbreviation key plus the path aliases; blocks use the
// aliases.
func TestIndexMapLegendAndAliases(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, n := range []string{"internal/handlers/a.go", "internal/handlers/b.go", "internal/handlers/c.go", "main.go", "notes.txt"} {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n\nfunc F"+strings.ToUpper(n[len(n)-4:len(n)-3])+"() {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, n)
	}
	x := &Index{Root: dir}
	m := x.Map(paths)
	if m == nil || len(m.Blocks) != 4 {
		t.Fatalf("map %+v, want 4 blocks (notes.txt has no parser)", m)
	}
	if !strings.HasPrefix(m.Legend, Abbreviations) || !strings.Contains(m.Legend, "@1/=internal/handlers/\n") {
		t.Errorf("legend:\n%s", m.Legend)
	}
	if m.Blocks[0].Path != "internal/handlers/a.go" || !strings.HasPrefix(m.Blocks[0].Text, "@1/a.go:\n  f FA():3\n") {
		t.Errorf("block 0 %q: %q", m.Blocks[0].Path, m.Blocks[0].Text)
	}
	// A changed file is re-parsed; an unchanged one comes from the cache.
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package x\n\nfunc Main2() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m2 := x.Map(paths); !strings.Contains(m2.Blocks[3].Text, "f Main2():3") {
		t.Errorf("main.go not re-parsed: %q", m2.Blocks[3].Text)
	}
}
