package acp

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
)

// A client sends session/new with a cwd the sandbox cannot be rooted in —
// relative (it would resolve against wherever strata runs), missing, a
// file — or a request whose id is an object, an array, a boolean or a
// fraction (issue 23). Each gets a JSON-RPC error and no session; valid
// ids (a string, an integer) still work. All of these used to be accepted.
func TestAttackSessionNewValidatesCwdAndIDs(t *testing.T) {
	dir := t.TempDir()
	ws, err := strata.Open(context.Background(), strata.Options{Dir: dir, ProviderName: "anthropic", APIKey: "test", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	newSession := func(id, cwd string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[]}}`
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		newSession("2", "relative/dir"),
		newSession("3", filepath.Join(dir, "missing")),
		newSession("4", filepath.Join(dir, "..", filepath.Base(dir), "..", "nope")),
		newSession(`{"a":1}`, dir),
		newSession(`[5]`, dir),
		newSession(`true`, dir),
		newSession(`6.5`, dir),
		newSession(`"s7"`, dir),
		newSession(`8`, dir),
	}
	var out bytes.Buffer
	if err := Serve(context.Background(), ws, agent.ModeAll, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		`"id":2,"error":{"code":-32602`, `cwd must be an absolute path`,
		`"id":3,"error":{"code":-32602`, `cwd does not exist`,
		`"id":4,"error":{"code":-32602`,
		`"id":"s7","result":{`, `"id":8,"result":{`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %s:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "id must be a string, an integer or null"); n != 4 {
		t.Errorf("%d bad-id errors, want 4:\n%s", n, got)
	}
	if n := strings.Count(got, `"sessionId"`); n != 2 {
		t.Errorf("%d sessions opened, want 2:\n%s", n, got)
	}
}
