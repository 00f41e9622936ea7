package strata_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/agentfile"
	"github.com/strata-agent/strata/internal/peers"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/mcp"
	"github.com/strata-agent/strata/session"
)

// writeMCPAgent writes agent name into dir's .kiro/agents with prompt and
// one stdio MCP server (a real peer from ../shared/peers).
func writeMCPAgent(t *testing.T, dir, name, prompt, server, peer, bin string) {
	t.Helper()
	cfg := map[string]any{"name": name, "prompt": prompt, "tools": []string{"*"},
		"mcpServers": map[string]any{server: map[string]any{"command": filepath.Join(bin, peer),
			"env": map[string]string{"PATH": bin + ":" + os.Getenv("PATH")}}}}
	b, _ := json.Marshal(cfg)
	writeFile(t, filepath.Join(dir, ".kiro", "agents", name+".json"), string(b))
}

func states(m *mcp.Manager) map[string]mcp.State {
	out := map[string]mcp.State{}
	for _, s := range m.Statuses() {
		out[s.Name] = s.State
	}
	return out
}

// An agent swap, as the kiro-cli turn anatomy's MCP section says: "Agent
// swap … terminates ALL existing servers, creates a fresh McpManager, and
// relaunches from the new agent's config". With real MCP servers: alpha's
// "everything" server is terminated, beta's "memory" server launched in a
// new manager, and the next request carries beta's prompt and tools while
// the conversation goes on. An unknown agent changes nothing.
func TestSwapAgentRelaunchesMCPServers(t *testing.T) {
	bin := peers.Bin(t)
	dir := t.TempDir()
	writeMCPAgent(t, dir, "alpha", "you are alpha", "ev", "mcp-server-everything", bin)
	writeMCPAgent(t, dir, "beta", "you are beta", "mem", "mcp-server-memory", bin)
	m := newScriptedModel(t, func(string) replay.Reply { return replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}} })
	ws, s := openScripted(t, strata.Options{Dir: dir, Agent: "alpha", Layout: "kiro"}, m)
	old := ws.MCP()
	if got := states(old); got["ev"] != mcp.Running {
		t.Fatalf("alpha's server: %v", got)
	}
	if _, err := s.Prompt(t.Context(), "hi"); err != nil {
		t.Fatal(err)
	}
	var cerr *strata.ConfigError
	if err := s.SwapAgent(t.Context(), "gamma"); !errors.As(err, &cerr) || states(old)["ev"] != mcp.Running {
		t.Fatalf("unknown agent: want a ConfigError and alpha's server still running, got %v, %v", err, states(old))
	}
	if err := s.SwapAgent(t.Context(), "beta"); err != nil {
		t.Fatal(err)
	}
	if got := states(old); got["ev"] != mcp.Terminated {
		t.Errorf("alpha's server after the swap: %v", got)
	}
	nm := ws.MCP()
	if nm == old || states(nm)["mem"] != mcp.Running || len(states(nm)) != 1 {
		t.Fatalf("beta's manager: %v (same as old: %v)", states(nm), nm == old)
	}
	if sm := s.MCP(); len(sm) != 1 || sm[0] != nm {
		t.Errorf("the session's MCP managers are not beta's: %v", sm)
	}
	if _, err := nm.GetToolSpecs("mem"); err != nil {
		t.Errorf("beta's server answers no tool list: %v", err)
	}
	if _, err := s.Prompt(t.Context(), "again"); err != nil {
		t.Fatal(err)
	}
	b := m.bodies()
	first, second := requestTools(t, b[0]), requestTools(t, b[1])
	if !slices.Contains(first, "ev___echo") || slices.ContainsFunc(first, func(n string) bool { return strings.HasPrefix(n, "mem___") }) {
		t.Errorf("alpha's request tools: %v", first)
	}
	if slices.Contains(second, "ev___echo") || !slices.Contains(second, "mem___create_entities") {
		t.Errorf("beta's request tools: %v", second)
	}
	msgs := requestMessages(t, b[1])
	if !strings.Contains(msgs[0], "Follow this instruction: you are beta") || strings.Contains(msgs[0], "alpha") {
		t.Errorf("context after the swap: %q", msgs[0])
	}
	if len(msgs) != 5 || msgs[2] != "hi" || msgs[3] != "ok" || msgs[4] != "again" {
		t.Errorf("the conversation must go on across the swap: %q", msgs)
	}
}

// openSwappable opens a workspace in a temporary directory with agents
// alpha and beta, a SQLite store, model m and a before_turn callback that
// aborts every turn while *abort is set, and a new session in it.
func openSwappable(t *testing.T, m *scriptedModel, abort *atomic.Bool) (*strata.Workspace, *strata.Session) {
	t.Helper()
	dir := t.TempDir()
	for _, a := range []string{"alpha", "beta"} {
		writeFile(t, filepath.Join(dir, ".kiro", "agents", a+".json"), `{"name":"`+a+`","prompt":"you are `+a+`","tools":["fs_read"]}`)
	}
	st, err := session.Open(filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	before := func(context.Context, agent.TurnInfo) error {
		if abort.Load() {
			return errors.New("not now")
		}
		return nil
	}
	return openScripted(t, strata.Options{Dir: dir, Agent: "alpha", Store: st, BeforeTurn: before}, m)
}

// An agent swap after a prompt that stopped before its first turn (here
// before_turn aborts it, so no turn — and for a session's first prompt no
// loop — is stored) continues the conversation as the session holds it:
// the swap used to rebuild the loop from the store and failed with "read
// loop …: not found" after a first prompt, or dropped the prompt's text
// after a later one. The stopped prompt's text goes with the next prompt,
// as it does without a swap, and the store then holds what the loop holds.
func TestSwapAgentAfterAPromptThatStoppedBeforeItsFirstTurn(t *testing.T) {
	for _, earlier := range []int{0, 1} {
		t.Run(fmt.Sprintf("after %d completed prompts", earlier), func(t *testing.T) {
			m := newScriptedModel(t, func(string) replay.Reply { return replay.Reply{Blocks: []llm.Block{llm.TextBlock("ok")}} })
			var abort atomic.Bool
			ws, s := openSwappable(t, m, &abort)
			ctx := t.Context()
			for range earlier {
				if _, err := s.Prompt(ctx, "first"); err != nil {
					t.Fatal(err)
				}
			}
			abort.Store(true)
			if _, err := s.Prompt(ctx, "stopped one"); !errors.Is(err, agent.ErrAborted) {
				t.Fatalf("prompt under an aborting before_turn: %v; want ErrAborted", err)
			}
			abort.Store(false)
			if err := s.SwapAgent(ctx, "beta"); err != nil {
				t.Fatalf("swap after a prompt that stopped before its first turn: %v", err)
			}
			if _, err := s.Prompt(ctx, "again"); err != nil {
				t.Fatal(err)
			}
			b := m.bodies()
			if len(b) != earlier+1 {
				t.Fatalf("%d model calls; want %d", len(b), earlier+1)
			}
			msgs := requestMessages(t, b[earlier])
			if last := msgs[len(msgs)-1]; !strings.Contains(last, "stopped one") || !strings.Contains(last, "again") {
				t.Errorf("the request after the swap must carry the stopped prompt's text and the new one: %q", msgs)
			}
			if !strings.Contains(b[earlier], "you are beta") {
				t.Error("the request after the swap is not beta's")
			}
			stored, err := ws.Store().History(ctx, s.LoopID())
			if err != nil {
				t.Fatal(err)
			}
			if g, w := mustJSON(stored), mustJSON(s.History()); g != w {
				t.Errorf("stored history %s\nwant the loop's %s", g, w)
			}
		})
	}
}

// `/agent`'s argument is parsed as kiro-cli parses it (docs/kiro.md, "MCP";
// the cases are kiro-cli's own tests of parse_subcommand): "swap NAME"
// names NAME, "swap" alone is an agent named swap, a name starting with
// "swap" is kept whole.
func TestAgentSwapName(t *testing.T) {
	for arg, want := range map[string]string{
		"beta":        "beta",
		" swap beta ": "beta",
		"swap create": "create",
		"swap edit":   "edit",
		"swap\tbeta":  "beta",
		"swap":        "swap",
		"swap   ":     "swap",
		"swapper":     "swapper",
		"":            "",
		"swap two ws": "two ws",
	} {
		if got := agentfile.SwapName(arg); got != want {
			t.Errorf("AgentSwapName(%q) = %q, want %q", arg, got, want)
		}
	}
}
