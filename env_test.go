package strata_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// An agent's toolsSettings stay per tool (kiro built-in-tools.md): a
// directory fs_read may read is not writable by fs_write, a path fs_write
// must not write stays readable, and fs_read's deniedPaths also keep
// fs_write away (its result would show the file). The calls come from a
// scripted model on a loopback server and run through the runtime's loop.
func TestAttackToolsSettingsPathsStayPerTool(t *testing.T) {
	dir, extra := t.TempDir(), t.TempDir()
	put := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(filepath.Join(extra, "readme.txt"), "read-only docs\n")
	put(filepath.Join(dir, "generated/out.txt"), "generated output\n")
	put(filepath.Join(dir, ".env"), "KEY=1\n")
	settings, _ := json.Marshal(map[string]any{
		"fs_read":  map[string]any{"allowedPaths": []string{extra}, "deniedPaths": []string{".env"}},
		"fs_write": map[string]any{"deniedPaths": []string{"generated"}},
	})
	put(filepath.Join(dir, ".kiro/agents/dev.json"), `{"name":"dev","prompt":"p","tools":["*"],"allowedTools":["@builtin"],"toolsSettings":`+string(settings)+`}`)

	calls := []llm.Block{
		toolUse("w_extra", "fs_write", map[string]any{"command": "create", "path": filepath.Join(extra, "planted.txt"), "file_text": "x"}),
		toolUse("r_extra", "fs_read", map[string]any{"operations": []any{map[string]any{"mode": "Line", "path": filepath.Join(extra, "readme.txt")}}}),
		toolUse("r_gen", "fs_read", map[string]any{"operations": []any{map[string]any{"mode": "Line", "path": "generated/out.txt"}}}),
		toolUse("w_gen", "fs_write", map[string]any{"command": "create", "path": "generated/out.txt", "file_text": "overwritten"}),
		toolUse("w_env", "fs_write", map[string]any{"command": "str_replace", "path": ".env", "old_str": "KEY=1", "new_str": "KEY=2"}),
	}
	srv := replayServer(t, llm.APIAnthropic, replay.Reply{Blocks: calls}, replay.Reply{Blocks: []llm.Block{llm.TextBlock("done")}})
	ws := openWorkspace(t, strata.Options{Dir: dir, Agent: "dev", ProviderName: "anthropic", BaseURL: srv.URL(),
		Mode: agent.ModeAll, Store: session.NewMemory(), Params: llm.Params{MaxTokens: 1024}})
	s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Prompt(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	results := resultsByID(s.History())
	want := []struct {
		id      string
		isError bool
		text    string
	}{
		{"w_extra", true, "outside the workspace root"},
		{"r_extra", false, "read-only docs"},
		{"r_gen", false, "generated output"},
		{"w_gen", true, `deniedPaths pattern "generated"`},
		{"w_env", true, `deniedPaths pattern ".env"`},
	}
	for _, w := range want {
		r, ok := results[w.id]
		if !ok {
			t.Errorf("no tool_result for %s", w.id)
			continue
		}
		if got := resultText(r); r.IsError != w.isError || !strings.Contains(got, w.text) {
			t.Errorf("%s: is_error=%v %q; want is_error=%v containing %q", w.id, r.IsError, got, w.isError, w.text)
		}
	}
	if _, err := os.Stat(filepath.Join(extra, "planted.txt")); err == nil {
		t.Error("fs_write created a file in a directory only fs_read's allowedPaths name")
	}
	for p, content := range map[string]string{"generated/out.txt": "generated output\n", ".env": "KEY=1\n"} {
		if b, _ := os.ReadFile(filepath.Join(dir, p)); string(b) != content {
			t.Errorf("%s was changed to %q", p, b)
		}
	}
}

func toolUse(id, name string, input map[string]any) llm.Block {
	b, _ := json.Marshal(input)
	return llm.Block{Type: llm.BlockToolUse, ID: id, Name: name, Input: b}
}

// resultText joins the text blocks of a tool_result.
func resultText(b llm.Block) string {
	var parts []string
	for _, c := range b.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// resultsByID returns the tool_result blocks of history by tool_use id.
func resultsByID(history []llm.Message) map[string]llm.Block {
	out := map[string]llm.Block{}
	for _, m := range history {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult {
				out[b.ID] = b
			}
		}
	}
	return out
}
