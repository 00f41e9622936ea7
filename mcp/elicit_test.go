package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/mcptest"
)

// formSchema is the conformance suite's elicitation-sep1034-client-defaults
// form: every field has a default, none is required.
var formSchema = json.RawMessage(`{"type":"object","properties":{
	"name":{"type":"string","description":"User name","default":"John Doe"},
	"age":{"type":"integer","description":"User age","default":30},
	"score":{"type":"number","default":95.5},
	"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
	"verified":{"type":"boolean","default":true}},"required":[]}`)

func ask(t *testing.T, e Elicitor) (string, bool) {
	t.Helper()
	ctx := context.Background()
	m := NewManager(Options{Elicit: e})
	defer m.Terminate()
	if err := m.LaunchServer(ctx, "ask", ServerConfig{URL: mcptest.Asker(t, formSchema)}); err != nil {
		t.Fatal(err)
	}
	r, err := m.ExecuteTool(ctx, "ask", "ask", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.Content[0].Text, r.IsError
}

// SEP-1034 (conformance elicitation-sep1034-client-defaults): an accepted
// empty form comes back with every schema default, typed.
func TestElicitAcceptDefaults(t *testing.T) {
	got, isErr := ask(t, AcceptDefaults)
	want := `{"action":"accept","content":{"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}}`
	if isErr || got != want {
		t.Fatalf("got %s (error %v), want %s", got, isErr, want)
	}
}

// Where no one can answer, the request is declined and the warning names
// the server and its message.
func TestElicitDeclineWarns(t *testing.T) {
	var warned string
	got, _ := ask(t, Decline(func(s string) { warned = s }, "no terminal"))
	if got != `{"action":"decline"}` {
		t.Fatalf("got %s", got)
	}
	if !strings.Contains(warned, `"ask"`) || !strings.Contains(warned, "Your details?") || !strings.Contains(warned, "no terminal") {
		t.Fatalf("warning %q", warned)
	}
}

// Without an Elicitor the capability is not offered and the server's
// request fails, as before.
func TestElicitNotOffered(t *testing.T) {
	got, isErr := ask(t, nil)
	if !isErr || !strings.Contains(got, "elicitation") {
		t.Fatalf("got %s (error %v)", got, isErr)
	}
}

// The line prompt: a bad integer is asked again, an enum outside its values
// is refused, empty lines keep the defaults.
func TestElicitLinePrompt(t *testing.T) {
	in := strings.Join([]string{"y", "thirty", "41", "", "", "unknown", "pending", ""}, "\n") + "\n"
	var out strings.Builder
	got, isErr := ask(t, LinePrompt{In: bufio.NewReader(strings.NewReader(in)), Out: &out})
	want := `{"action":"accept","content":{"age":41,"name":"John Doe","score":95.5,"status":"pending","verified":true}}`
	if isErr || got != want {
		t.Fatalf("got %s, want %s\nprompt:\n%s", got, want, out.String())
	}
	for _, s := range []string{`MCP server "ask" asks: Your details?`, "invalid syntax", `"unknown" is not one of active, inactive, pending`, "(default John Doe)"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("prompt lacks %q:\n%s", s, out.String())
		}
	}
	// n declines; end of input cancels.
	for in, want := range map[string]string{"n\n": `{"action":"decline"}`, "": `{"action":"cancel"}`} {
		got, _ := ask(t, LinePrompt{In: bufio.NewReader(strings.NewReader(in)), Out: &out})
		if got != want {
			t.Errorf("input %q: got %s, want %s", in, got, want)
		}
	}
}
