package agent

import (
	"encoding/json"
	"testing"
)

// The canonical form of a tool input is compact, keeps the model's key
// order and number spelling, leaves <, > and & as they are, survives
// encoding/json (which escapes them inside a RawMessage) and is a fixed
// point; invalid JSON is kept.
func TestCanonicalInput(t *testing.T) {
	for in, want := range map[string]string{
		`{ "command": "ls -la 2>&1 | head",  "b": [1, 2.50, true, null, {}] }`: `{"command":"ls -la 2>&1 | head","b":[1,2.50,true,null,{}]}`,
		`{"z":1,"a":"\u003cx\u003e"}`:                                          `{"z":1,"a":"<x>"}`,
		`{"q":"a\\u003cb","n":"line\nbreak"}`:                                  `{"q":"a\\u003cb","n":"line\nbreak"}`,
		`{"unterminated": `:                                                    `{"unterminated": `,
	} {
		got := string(canonicalInput(json.RawMessage(in)))
		if got != want {
			t.Errorf("canonicalInput(%s) = %s; want %s", in, got, want)
			continue
		}
		if again := string(canonicalInput(json.RawMessage(got))); again != got {
			t.Errorf("not a fixed point: %s → %s", got, again)
		}
		if !json.Valid([]byte(got)) {
			continue
		}
		enc, _ := json.Marshal(json.RawMessage(got))
		if back := string(canonicalInput(enc)); back != got {
			t.Errorf("through encoding/json: %s → %s → %s", got, enc, back)
		}
	}
}
