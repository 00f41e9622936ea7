//go:build cgo

package symbols

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// moduleDir returns the module cache directory of a dependency of this
// module (the grammar modules ship real example sources).
func moduleDir(t *testing.T, mod string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("module %s is not in the module cache: %v", mod, err)
		}
		t.Skipf("module %s is not in the module cache (run go mod download): %v", mod, err)
	}
	return dir
}

// Each language's parser lists the declarations of real source files
// (the grammars' own example sources) with kind, name, parameters as
// written and line, members indented under their class.
func TestParseRealSources(t *testing.T) {
	const ts = "github.com/tree-sitter/"
	cases := []struct {
		lang, mod, file string
		want            []string
	}{
		{"python", ts + "tree-sitter-python", "setup.py",
			[]string{"\n  c Build:9\n    m run(self):10\n", "\n  c BdistWheel:17\n    m get_tag(self):18\n"}},
		{"javascript", ts + "tree-sitter-javascript", "examples/text-editor-component.js",
			[]string{"\n  c TextEditorComponent:30\n", "\n    m didMouseDownOnContent(event):1743\n"}},
		{"typescript", ts + "tree-sitter-typescript", "examples/parser.ts",
			[]string{"\n  n ts:4\n    e SignatureFlags:5\n", "\n    f createNode(kind: SyntaxKind, pos?: number, end?: number):22\n"}},
		{"rust", ts + "tree-sitter-rust", "examples/ast.rs",
			[]string{"\n  c Lifetime:37\n    m fmt(&self, f: &mut fmt::Formatter):44\n"}},
		{"java", ts + "tree-sitter-java", "test/highlight/types.java",
			[]string{"\n  e Material:1\n", "\n  c Person:11\n", "\n    m getName():24\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.lang, func(t *testing.T) {
			p := filepath.Join(moduleDir(t, tc.mod), tc.file)
			src, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(tc.file, src)
			if err != nil {
				t.Fatal(err)
			}
			if f.Language != tc.lang {
				t.Errorf("language %q, want %q", f.Language, tc.lang)
			}
			block := Block(f, nil)
			for _, w := range tc.want {
				if !strings.Contains(block, w) {
					t.Errorf("block of %s lacks %q:\n%s", tc.file, w, block)
				}
			}
		})
	}
}

// Files with syntax errors still give the declarations tree-sitter
// recovered.
func TestParseRecoversFromSyntaxErrors(t *testing.T) {
	f, err := Parse("broken.py", []byte("class Ok:\n    def fine(self):\n        pass\n\ndef broken(:\n"))
	if err != nil {
		t.Fatal(err)
	}
	if b := Block(f, nil); !strings.Contains(b, "c Ok:1\n    m fine(self):2\n") {
		t.Errorf("recovered block:\n%s", b)
	}
}
