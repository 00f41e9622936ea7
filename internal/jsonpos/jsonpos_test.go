package jsonpos

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// badJSON are malformed documents whose error position Python's json module
// reports as "line L column C".
var badJSON = []struct{ name, doc string }{
	{"bad value", `{"a": x}`},
	{"trailing comma before a newline brace", "{\n  \"a\": 1,\n}\n"},
	{"unexpected end", `{"a": 1`},
	{"stray brace after blank lines", "\n\n   }"},
	{"missing colon", `{"a" 1}`},
	{"non-ASCII before the error", "{\"é\": \"ü\", x}"},
	{"tab indented", "{\n\t\"a\": [1, 2,, 3]\n}"},
	{"empty input", ``},
}

var pyPos = regexp.MustCompile(`line (\d+) column (\d+)`)

// TestOfMatchesPython checks every position against python3's json module
// on the same bytes (skipped when python3 is absent).
func TestOfMatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on $PATH: cannot compare with Python's json positions")
	}
	for _, tc := range badJSON {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(py, "-c", "import json,sys\ntry:\n json.loads(sys.stdin.buffer.read().decode())\nexcept json.JSONDecodeError as e:\n print(e)")
			cmd.Stdin = strings.NewReader(tc.doc)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("python3: %v", err)
			}
			m := pyPos.FindStringSubmatch(string(out))
			if m == nil {
				t.Fatalf("python3 found no error position: %q", out)
			}
			var v any
			jerr := json.Unmarshal([]byte(tc.doc), &v)
			p, ok := Of([]byte(tc.doc), jerr)
			if !ok {
				t.Fatalf("Of(%v) found no position", jerr)
			}
			if got, want := fmt.Sprintf("%d %d", p.Line, p.Column), m[1]+" "+m[2]; got != want {
				t.Errorf("position = %s (line column), python3 says %s (%s)", got, want, strings.TrimSpace(string(out)))
			}
		})
	}
}

func TestOfTypeErrorPointsIntoTheValue(t *testing.T) {
	doc := "{\n  \"a\": \"xy\"\n}"
	var v struct {
		A int `json:"a"`
	}
	err := json.Unmarshal([]byte(doc), &v)
	p, ok := Of([]byte(doc), err)
	if !ok || p != (Position{Line: 2, Column: 11}) {
		t.Errorf("Of = %v, %v; want 2:11 (the closing quote of \"xy\")", p, ok)
	}
}

func TestOfWithoutOffset(t *testing.T) {
	if _, ok := Of(nil, fmt.Errorf("plain")); ok {
		t.Error("Of found a position in an error without an offset")
	}
	if err := Wrap(nil, fmt.Errorf("plain")); err.Error() != "plain" {
		t.Errorf("Wrap changed an error without an offset: %v", err)
	}
}

func TestWrapKeepsTheError(t *testing.T) {
	doc := []byte(`{"a": x}`)
	var v any
	err := Wrap(doc, json.Unmarshal(doc, &v))
	var se *json.SyntaxError
	if !strings.HasPrefix(err.Error(), "line 1, column 7: ") || !errors.As(err, &se) {
		t.Errorf("Wrap = %v; want 'line 1, column 7: …' wrapping the *json.SyntaxError", err)
	}
}
