package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/strata-agent/strata/internal/mcptest"
	"github.com/strata-agent/strata/mcp"
)

// An MCP server's form (a real elicitation/create from a go-sdk server on
// 127.0.0.1) is answered on the screen: y opens it, each Enter answers one
// field (a bad integer is asked again, empty keeps the default), and the
// server gets the typed values with the defaults filled in; n declines.
func TestScreenAnswersMCPForm(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"age":{"type":"integer","default":30},
		"name":{"type":"string","title":"Name","default":"John Doe"}},"required":[]}`)
	url := mcptest.Asker(t, schema)
	for _, c := range []struct {
		keys []string // "y", "n", or a line typed then Enter ("=" prefix)
		want string
	}{
		{[]string{"y", "=thirty", "=41", "="}, `{"action":"accept","content":{"age":41,"name":"John Doe"}}`},
		{[]string{"n"}, `{"action":"decline"}`},
	} {
		msgs := make(chan tea.Msg, 100)
		mgr := mcp.NewManager(mcp.Options{Elicit: Elicitor{Send: func(m tea.Msg) { msgs <- m }}})
		if err := mgr.LaunchServer(context.Background(), "ask", mcp.ServerConfig{URL: url}); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			r, err := mgr.ExecuteTool(context.Background(), "ask", "ask", nil, nil)
			if err != nil {
				got <- err.Error()
				return
			}
			got <- r.Content[0].Text
		}()
		m := New(nil, "h")
		select {
		case msg := <-msgs:
			m.Update(msg)
		case <-time.After(10 * time.Second):
			t.Fatal("no form reached the screen")
		}
		if !strings.Contains(m.Status(), "form") {
			t.Errorf("status %q", m.Status())
		}
		for _, k := range c.keys {
			if line, ok := strings.CutPrefix(k, "="); ok {
				m.in.SetValue(line)
				m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
				continue
			}
			m.Update(tea.KeyPressMsg{Code: rune(k[0]), Text: k})
		}
		select {
		case g := <-got:
			if g != c.want {
				t.Errorf("keys %q: server got %s, want %s\n%s", c.keys, g, c.want, m.Transcript())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("keys %q: no answer\n%s", c.keys, m.Transcript())
		}
		mgr.Terminate()
		tr := m.Transcript()
		for _, w := range []string{`? MCP server "ask" asks: Your details?`} {
			if !strings.Contains(tr, w) {
				t.Errorf("transcript lacks %q:\n%s", w, tr)
			}
		}
		if c.keys[0] == "y" && (!strings.Contains(tr, "invalid syntax") || !strings.Contains(tr, "Name (name) [string] (default John Doe)")) {
			t.Errorf("transcript:\n%s", tr)
		}
	}
}
