package strata_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/tool"
)

// The continuation bound of a session (docs/loop.md, "continuation limit"):
// settings.json's runtime.continuation.maxIterations when Options.MaxTurns is
// 0 (the workspace's .strata/settings.json over the user's), MaxTurns (the
// CLI's --max-turns / config.yaml max_turns) over both, 50 without either; a
// bad value stops Open with an error naming the file.
func TestContinuationBoundFromSettingsJSON(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	count := tool.Func("count", "Counts calls.", func(context.Context, struct{}) (string, error) { return "ok", nil })
	loop := func(req replay.Request) replay.Response {
		r, _ := replay.ToolCall(llm.APIAnthropic, "call_"+string(rune('a'+strings.Count(string(req.Body), `"tool_result"`))), "count", json.RawMessage(`{}`))
		return r
	}
	rounds := func(dir string, maxTurns int) (int, error) {
		ws, err := strata.Open(t.Context(), strata.Options{Dir: dir, ProviderName: "anthropic", Respond: loop, Tools: []tool.Tool{count}, MaxTurns: maxTurns, Mode: agent.ModeAll})
		if err != nil {
			return 0, err
		}
		defer ws.Close()
		s, err := ws.NewSession(t.Context(), strata.SessionOptions{})
		if err != nil {
			return 0, err
		}
		defer s.Close()
		res, err := s.Prompt(t.Context(), "count forever")
		if !errors.Is(err, agent.ErrMaxTurns) {
			t.Fatalf("want ErrMaxTurns, got %v", err)
		}
		return res.Rounds, nil
	}
	write := func(dir, body string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	write(filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "strata"), `{"runtime":{"continuation":{"maxIterations":3}}}`)
	if n, err := rounds(dir, 0); err != nil || n != 3 {
		t.Errorf("user settings.json maxIterations 3: %d rounds, %v", n, err)
	}
	write(filepath.Join(dir, ".strata"), `{"runtime":{"continuation":{"maxIterations":2}}}`)
	if n, err := rounds(dir, 0); err != nil || n != 2 {
		t.Errorf("workspace settings.json maxIterations 2: %d rounds, %v", n, err)
	}
	if n, err := rounds(dir, 1); err != nil || n != 1 {
		t.Errorf("MaxTurns 1 over settings.json: %d rounds, %v", n, err)
	}
	write(filepath.Join(dir, ".strata"), `{"runtime":{"continuation":{"maxIterations":"many"}}}`)
	var ce *strata.ConfigError
	if _, err := rounds(dir, 0); !errors.As(err, &ce) || !strings.Contains(err.Error(), filepath.Join(dir, ".strata", "settings.json")) {
		t.Errorf("bad maxIterations: %v", err)
	}
}
