package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// 'run --format json' is for scripts (docs/cli.md, "run --format json"):
// every event line carries the session id, and the run ends with one
// result object: the answer, its stop reason, the usage, the cost in USD
// (priced from the cachesim table for a model it has), the session and
// loop ids.
func TestRunJSONEndsWithAResult(t *testing.T) {
	ws, streams := t.TempDir(), t.TempDir()
	u := llm.Usage{Input: 1000, Output: 100}
	call := writeStream(t, streams, "g.sse", u, llm.StopToolUse, llm.ToolUseBlock("toolu_g", "glob", json.RawMessage(`{"pattern":"*"}`)))
	answer := "Nothing here." + strings.Repeat(" Only the empty directory this run was started in.", 3)
	final := writeStream(t, streams, "f.sse", u, llm.StopEndTurn, llm.TextBlock(answer))
	r := runCLI(t, ws, nil, "run", "--format", "json", "--replay", call+","+final, "--model", "claude-sonnet-4-5", "what is here?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	sessions := map[string]int{}
	for _, l := range lines {
		var ev struct {
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not JSON: %q: %v", l, err)
		}
		sessions[ev.SessionID]++
	}
	if len(sessions) != 1 || sessions[""] > 0 {
		t.Errorf("session ids of the %d lines: %v; want one, on every line", len(lines), sessions)
	}
	var res struct {
		Kind, Answer, Error string
		SessionID           string   `json:"session_id"`
		LoopID              string   `json:"loop_id"`
		StopReason          string   `json:"stop_reason"`
		Calls               int      `json:"model_calls"`
		Cost                *float64 `json:"cost_usd"`
		Usage               llm.Usage
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatal(err)
	}
	// claude-sonnet-4-5: $3 per million input tokens, $15 output.
	want := (2000*3.0 + 200*15.0) / 1e6
	if res.Kind != "result" || res.Answer != answer || res.StopReason != "end_turn" || res.Calls != 2 ||
		res.Usage.Input != 2000 || res.Usage.Output != 200 || res.LoopID == "" || !strings.Contains(r.stderr, res.SessionID) ||
		res.Cost == nil || *res.Cost < want*0.999 || *res.Cost > want*1.001 || res.Error != "" {
		t.Errorf("result line %s\nwant kind result, the answer, end_turn, 2 calls, 2000/200 tokens, $%.4f, the session of stderr", lines[len(lines)-1], want)
	}

	// sessions show --format json has the whole session, the answer in
	// full (text output cuts it at 80 characters; --full shows it whole).
	show := runCLI(t, ws, nil, "sessions", "show", res.SessionID, "--format", "json")
	var d struct {
		ID       string
		Messages []struct{ Content []llm.Block }
	}
	if err := json.Unmarshal([]byte(show.stdout), &d); err != nil || d.ID != res.SessionID {
		t.Fatalf("sessions show --format json: %v (exit %d)\n%s%s", err, show.code, show.stdout, show.stderr)
	}
	found := false
	for _, m := range d.Messages {
		for _, b := range m.Content {
			found = found || b.Text == answer
		}
	}
	if !found {
		t.Errorf("sessions show --format json lacks the whole answer:\n%s", show.stdout)
	}
	if full := runCLI(t, ws, nil, "sessions", "show", res.SessionID, "--full"); !strings.Contains(full.stdout, "    "+answer+"\n") {
		t.Errorf("sessions show --full lacks the whole answer:\n%s", full.stdout)
	}
}

// The bare command (docs/cli.md, "strata"): without a terminal 'strata'
// prints its help; 'strata -p QUESTION' and 'strata "a question"' answer
// as 'strata run' does; a single unknown word is a mistyped command.
func TestBareStrataWithoutTerminal(t *testing.T) {
	ws := t.TempDir()
	if r := runCLI(t, ws, nil); r.code != 0 || !strings.Contains(r.stdout, `strata -p "a question"`) {
		t.Errorf("bare strata: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"-p", "what is here?"}, {"what is here?"}} {
		if r := runCLI(t, ws, nil, args...); r.code != 0 || !strings.Contains(r.stdout, "That is what this directory holds") {
			t.Errorf("strata %q: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}
