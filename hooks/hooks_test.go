package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/proctest"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt/kiro"
	"github.com/strata-agent/strata/tool"
)

// project writes scripts and an agent file using them into a temp dir and
// loads it through the real config loader.
func project(t *testing.T, hooks string) (*config.Agent, string) {
	t.Helper()
	dir := t.TempDir()
	scripts := map[string]string{
		"spawn.sh":  "#!/bin/bash\necho 'branch: main'\n",
		"broken.sh": "#!/bin/bash\necho 'no git here' >&2\nexit 1\n",
		"prompt.sh": "#!/bin/bash\njq -r '\"prompt was: \" + .prompt' 2>/dev/null || python3 -c 'import json,sys; print(\"prompt was: \" + json.load(sys.stdin)[\"prompt\"])'\n",
		"guard.sh":  "#!/bin/bash\nin=$(cat)\nif echo \"$in\" | grep -q secret; then echo 'reading secrets is not allowed' >&2; exit 2; fi\n",
		"post.sh":   "#!/bin/bash\ncat >> post.log\necho >> post.log\n",
		"count.sh":  "#!/bin/bash\necho run >> count.log\necho counted\n",
		"slow.sh":   "#!/bin/bash\nsleep 5\n",
		"big.sh":    "#!/bin/bash\nhead -c 5000 /dev/zero | tr '\\0' x\n",
		"stop.sh":   "#!/bin/bash\ncat > stop.json\n",
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("hunter2"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644)
	file := filepath.Join(dir, "agent.json")
	if err := os.WriteFile(file, []byte(`{"name":"hooked","description":"hooks test","tools":["*"],"hooks":`+hooks+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := config.LoadAgent(file)
	if err != nil {
		t.Fatal(err)
	}
	return a, dir
}

// hookedLoop returns an agent with r's hooks and the built-in tools in dir,
// talking to a replay server (closed at the end of the test) that answers
// with calls, then with "done".
func hookedLoop(t *testing.T, dir string, r *Runner, bus *event.Bus, calls ...llm.Block) (*agent.Agent, *replay.Server) {
	t.Helper()
	u := llm.Usage{Input: 10, Output: 5}
	m1, err1 := replay.AnthropicStream("m1", u, llm.StopToolUse, calls...)
	m2, err2 := replay.AnthropicStream("m2", u, llm.StopEndTurn, llm.TextBlock("done"))
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer(m1, m2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ag, err := agent.New(agent.Config{Provider: anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL()}),
		Layout: kiro.Layout{}, Tools: tool.NewRegistry(tool.Builtins()...), Env: &tool.Env{Workdir: dir}, Model: "m",
		Bus: bus, Hooks: r.Hooks()})
	if err != nil {
		t.Fatal(err)
	}
	return ag, srv
}

func TestAgentSpawnAndWarnings(t *testing.T) {
	a, dir := project(t, `{"agentSpawn":[{"command":"./spawn.sh"},{"command":"./broken.sh"},{"command":"./slow.sh","timeout_ms":200},{"command":"./big.sh","max_output_size":100}]}`)
	var warns []string
	r := New(a, Options{Cwd: dir, Warn: func(s string) { warns = append(warns, s) }})
	out := r.AgentSpawn(context.Background())
	if len(out) != 2 || out[0] != "branch: main" || !strings.HasSuffix(out[1], "[output truncated at 100 bytes]") || !strings.HasPrefix(out[1], strings.Repeat("x", 100)) {
		t.Errorf("outputs %q", out)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], "no git here") || !strings.Contains(warns[1], "timed out after 200ms") {
		t.Errorf("warnings %q", warns)
	}
}

// A replayed loop turn with every hook kind: userPromptSubmit output reaches
// the request with the user's prompt, never the context message (the kiro-cli
// turn anatomy's "Layer 4: Agent Spawn Hooks" is "Output from AgentSpawn
// lifecycle hooks"), preToolUse exit 2 blocks the matching call with
// its stderr, postToolUse sees the tool response, stop runs at the end, and a
// cached hook runs once.
func TestHooksInTheLoop(t *testing.T) {
	a, dir := project(t, `{
	  "userPromptSubmit":[{"command":"./prompt.sh"}],
	  "preToolUse":[{"matcher":"fs_read","command":"./guard.sh"},{"matcher":"fs_write","command":"exit 2"},{"command":"./count.sh","cache_ttl_seconds":60}],
	  "postToolUse":[{"matcher":"read","command":"./post.sh"}],
	  "stop":[{"command":"./stop.sh"}]}`)
	read := func(id, path string) llm.Block {
		in, _ := json.Marshal(map[string]any{"operations": []map[string]any{{"mode": "Line", "path": path}}})
		return llm.ToolUseBlock(id, "fs_read", in)
	}
	var mu sync.Mutex
	var warns []string
	r := New(a, Options{Cwd: dir, Warn: func(s string) { mu.Lock(); warns = append(warns, s); mu.Unlock() }})
	bus := event.NewBus()
	ag, srv := hookedLoop(t, dir, r, bus, read("t1", "secret.txt"), read("t2", "notes.txt"), read("t3", "notes.txt"))
	if _, err := ag.Prompt(context.Background(), "read my notes"); err != nil {
		t.Fatal(err)
	}
	bus.Close()
	first := string(srv.Received()[0].Body)
	if !strings.Contains(first, "prompt was: read my notes") || !strings.Contains(first, kiro.EntryBegin[:len(kiro.EntryBegin)-1]) {
		t.Errorf("userPromptSubmit output not in the request:\n%.600s", first)
	}
	h := ag.History()
	if u := h[0].Text(); !strings.HasPrefix(u, kiro.EntryBegin) || !strings.HasSuffix(u, kiro.EntryEnd+"read my notes") ||
		!strings.Contains(u, "prompt was: read my notes") {
		t.Errorf("user message should be the hook entry then the prompt, got %q", u)
	}
	results := h[len(h)-2].Content
	if !results[0].IsError || !strings.Contains(results[0].Content[0].Text, "reading secrets is not allowed") {
		t.Errorf("secret read not blocked: %+v", results[0])
	}
	if results[1].IsError || !strings.Contains(results[1].Content[0].Text, "hello") {
		t.Errorf("notes read: %+v", results[1])
	}
	post, _ := os.ReadFile(filepath.Join(dir, "post.log"))
	if n := strings.Count(string(post), `"hook_event_name":"postToolUse"`); n != 2 || !strings.Contains(string(post), `"tool_response":{"result":["`) {
		t.Errorf("postToolUse saw %d calls: %s", n, post)
	}
	// count.sh (no matcher, cached 60 s): t1 was blocked by the earlier
	// guard (the first exit 2 ends the call's hooks), t2 ran it, t3 has the
	// same input as t2 and got the cached result → one run.
	if count, _ := os.ReadFile(filepath.Join(dir, "count.log")); strings.Count(string(count), "run") != 1 {
		t.Errorf("cached hook ran %d times; want 1", strings.Count(string(count), "run"))
	}
	if stop, err := os.ReadFile(filepath.Join(dir, "stop.json")); err != nil || !strings.Contains(string(stop), `"hook_event_name":"stop"`) {
		t.Errorf("stop hook: %s %v", stop, err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
}

// A preToolUse guard that does not answer within its timeout blocks the
// call (fail closed) with a reason naming the hook and the timeout, and the
// background children it started are killed with it (its process group).
func TestAttackPreToolUseTimeoutBlocksAndKillsChildren(t *testing.T) {
	a, dir := project(t, `{"preToolUse":[{"matcher":"execute_bash","command":"sleep 30 & echo $! > hook.pid; sleep 30 & wait; exit 2","timeout_ms":500}]}`)
	run := json.RawMessage(`{"command":"touch ran.txt","summary":"test"}`)
	ag, _ := hookedLoop(t, dir, New(a, Options{Cwd: dir}), nil, llm.ToolUseBlock("t1", "execute_bash", run))
	if _, err := ag.Prompt(context.Background(), "run it"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Error("the tool ran although its preToolUse guard timed out")
	}
	h := ag.History()
	res := h[len(h)-2].Content[0]
	if !res.IsError || len(res.Content) == 0 {
		t.Fatalf("result of the guarded call: %+v", res)
	}
	for _, want := range []string{"preToolUse", "sleep 30 & echo $! > hook.pid", "timed out after 500ms"} {
		if !strings.Contains(res.Content[0].Text, want) {
			t.Errorf("denial %q does not mention %q", res.Content[0].Text, want)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "hook.pid"))
	if err != nil {
		t.Fatalf("the hook did not start its child: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	proctest.WaitGone(t, pid, "a timed-out hook's child")
}
