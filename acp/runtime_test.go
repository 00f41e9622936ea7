package acp_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/acp"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt"
)

// composed is one request a loop composed: the layout's input and output.
type composed struct {
	ctx prompt.Context
	req []byte // JSON of the llm.Request
}

// recorder keeps every composed request per loop, in order.
type recorder struct {
	mu    sync.Mutex
	loops map[string][]composed     // by conversation (prompt.Context.ConversationID): its loops' requests
	ctx   map[string]prompt.Context // pending compose_request pre context per conversation
	conv  map[string]string         // loop id → conversation id
}

func (r *recorder) hooks() []agent.Hook {
	return []agent.Hook{
		{Name: "ctx", Stage: agent.StageComposeRequest, Phase: agent.PhasePre, Kind: agent.HookObserver,
			Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
				c := *p.Context
				c.History = deepCopy(c.History)
				r.mu.Lock()
				if r.conv == nil {
					r.conv = map[string]string{}
				}
				// A loop per prompt: group requests by conversation.
				r.conv[p.Turn.LoopID] = c.ConversationID
				r.ctx[c.ConversationID] = c
				r.mu.Unlock()
				return agent.Verdict{}, nil
			}},
		{Name: "req", Stage: agent.StageComposeRequest, Phase: agent.PhasePost, Kind: agent.HookObserver,
			Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
				b, err := json.Marshal(p.Request)
				r.mu.Lock()
				conv := r.conv[p.Turn.LoopID]
				r.loops[conv] = append(r.loops[conv], composed{ctx: r.ctx[conv], req: b})
				r.mu.Unlock()
				return agent.Verdict{}, err
			}},
	}
}

func deepCopy(h []llm.Message) []llm.Message {
	b, _ := json.Marshal(h)
	var out []llm.Message
	_ = json.Unmarshal(b, &out)
	return out
}

// model answers by the request: the delegating prompt gets a use_subagent
// call, the sub-agent's task a text answer, tool results a closing text, and
// anything else a greeting.
func model(req replay.Request) replay.Response {
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(req.Body, &body)
	last := ""
	if n := len(body.Messages); n > 0 {
		last = string(body.Messages[n-1].Content)
	}
	reply := func(b llm.Block) replay.Response {
		r, err := replay.Turn(llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{b}, Usage: llm.Usage{Input: 10, Output: 5}})
		if err != nil {
			return replay.Response{Status: 500, Body: []byte(err.Error())}
		}
		return r
	}
	switch {
	case strings.Contains(last, "tool_result"):
		return reply(llm.TextBlock("delegated and done"))
	case strings.Contains(last, "please delegate"):
		return reply(llm.Block{Type: llm.BlockToolUse, ID: "toolu_1", Name: "use_subagent", Input: json.RawMessage(`{"task":"count to three"}`)})
	case strings.Contains(last, "count to three"):
		return reply(llm.TextBlock("one two three"))
	}
	return reply(llm.TextBlock("hello"))
}

// acpClient is a minimal ACP client: it accepts every update and allows
// every permission.
type acpClient struct{ sdk.Client }

func (acpClient) SessionUpdate(context.Context, sdk.SessionNotification) error { return nil }
func (acpClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow_once")}, nil
}

// Two ACP sessions prompt at once, one of them through a sub-agent, all
// under a stateful layout. Each loop has its own layout instance, so every
// loop's requests are exactly what a fresh instance of the layout makes of
// that loop's contexts alone: the sub-agent and the other session change
// nothing in the delegating session's next request (which a shared instance
// did: the child's request moved the parent's working file), and nothing
// races (run with -race).
func TestConcurrentACPSessionsAndSubAgentKeepTheirOwnLayout(t *testing.T) {
	for _, layout := range []string{"cachefit", "tiered"} {
		t.Run(layout, func(t *testing.T) {
			dir := t.TempDir()
			must(t, os.MkdirAll(filepath.Join(dir, ".kiro", "agents"), 0o755))
			must(t, os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte("# Notes\nThe build uses make.\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, ".kiro", "agents", "lead.json"), []byte(`{"name":"lead","prompt":"You lead.",`+
				`"resources":["file://NOTES.md"],"tools":["*"],"allowedTools":["*"]}`), 0o644))
			srv, err := replay.NewResponder(model)
			must(t, err)
			defer srv.Close()
			rec := &recorder{loops: map[string][]composed{}, ctx: map[string]prompt.Context{}}
			ws, err := strata.Open(context.Background(), strata.Options{Dir: dir, Agent: "lead", Layout: layout,
				ProviderName: "anthropic", APIKey: "test", BaseURL: srv.URL(), Model: "claude-sonnet-4-5", Hooks: rec.hooks()})
			must(t, err)
			defer ws.Close()

			cr, aw := io.Pipe()
			ar, cw := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- acp.Serve(ctx, ws, agent.ModeAll, cr, cw) }()
			conn := sdk.NewClientSideConnection(acpClient{}, aw, ar)
			_, err = conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
			must(t, err)
			var ids [2]sdk.SessionId
			for i := range ids {
				r, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
				must(t, err)
				ids[i] = r.SessionId
			}
			prompts := [2][]string{{"hi", "please delegate", "and again"}, {"hello", "how are you", "bye"}}
			var wg sync.WaitGroup
			for i := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for _, p := range prompts[i] {
						if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: ids[i], Prompt: []sdk.ContentBlock{sdk.TextBlock(p)}}); err != nil {
							t.Errorf("session %d prompt %q: %v", i, p, err)
						}
					}
				}()
			}
			wg.Wait()
			cancel()
			aw.Close()
			<-served

			// Conversations: the two sessions' (a loop per prompt each) and the
			// sub-agent's.
			if len(rec.loops) != 3 {
				t.Fatalf("%d conversations composed requests; want 3 (two sessions and a sub-agent)", len(rec.loops))
			}
			delegator := false
			for loop, reqs := range rec.loops {
				fresh, err := prompt.Lookup(layout)
				must(t, err)
				for i, c := range reqs {
					want, _, err := fresh.Assemble(&c.ctx)
					must(t, err)
					wb, _ := json.Marshal(want)
					if string(wb) != string(c.req) {
						t.Errorf("loop %s request %d differs from a fresh %s layout fed only this loop's contexts:\n got %s\nwant %s",
							loop, i, layout, c.req, wb)
					}
				}
				if len(reqs) == 4 { // hi, delegate, its continuation after the sub-agent, and again
					delegator = true
				}
			}
			if !delegator {
				t.Errorf("no loop made the 4 requests of the delegating session: %d loops", len(rec.loops))
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
