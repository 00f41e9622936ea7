package acp_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/acp"
)

// metaClient records the turn id in the _meta of each session/update.
type metaClient struct {
	acpClient
	mu    sync.Mutex
	turns []string // "loop:index", "" for an update made from no turn
}

func (c *metaClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	id := ""
	if t, ok := n.Meta[acp.MetaTurn].(map[string]any); ok {
		id = fmt.Sprintf("%v:%v", t["loop_id"], t["turn_index"])
	}
	c.mu.Lock()
	c.turns = append(c.turns, id)
	c.mu.Unlock()
	return nil
}

// Each session/prompt is a loop of its own (docs/turn.md, rule 2: the Rust
// agent-loop Turn's "turn_index — Zero-based index within the current loop
// (0 = first turn after AgentStart)"): the updates of a prompt carry its
// loop's id and turn index in _meta, and the second prompt's are a new loop
// from index 0.
func TestPromptUpdatesCarryTheirLoopAndTurn(t *testing.T) {
	ws, err := strata.Open(context.Background(), strata.Options{Dir: t.TempDir(), ProviderName: "anthropic", Respond: bashThenText})
	must(t, err)
	defer ws.Close()
	c := &metaClient{}
	conn := serve(t, ws, c)
	_, err = conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	must(t, err)
	ns, err := conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	must(t, err)
	var per [][]string
	for _, p := range []string{"print two lines", "and now?"} {
		c.mu.Lock()
		c.turns = nil
		c.mu.Unlock()
		_, err := conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(p)}})
		must(t, err)
		c.mu.Lock()
		var ids []string
		for _, id := range c.turns {
			if id != "" && (len(ids) == 0 || ids[len(ids)-1] != id) {
				ids = append(ids, id)
			}
		}
		c.mu.Unlock()
		per = append(per, ids)
	}
	if len(per[0]) != 2 || len(per[1]) != 1 {
		t.Fatalf("turns seen per prompt %q; want two turns, then one", per)
	}
	first := strings.TrimSuffix(per[0][0], ":0")
	if per[0][1] != first+":1" || strings.HasPrefix(per[1][0], first) || !strings.HasSuffix(per[1][0], ":0") {
		t.Errorf("turns seen per prompt %q; want loop:0 loop:1, then another loop's :0", per)
	}
}

// session/load of a stored session that has no loop yet (a session/new
// whose client never prompted, or whose first prompt stopped before its
// first model call) opens it with nothing to replay, and its next prompt
// runs; session/load used to answer "invalid params: … has no loop to
// continue".
func TestLoadSessionWithoutALoop(t *testing.T) {
	dir := t.TempDir()
	ws, err := strata.Open(context.Background(), strata.Options{Dir: dir, ProviderName: "anthropic", Respond: bashThenText})
	must(t, err)
	defer ws.Close()
	s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
	must(t, err)
	id := s.ID()
	must(t, s.Close())
	c := &metaClient{}
	conn := serve(t, ws, c)
	_, err = conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	must(t, err)
	if _, err := conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: sdk.SessionId(id), Cwd: dir, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load of a session without a loop: %v", err)
	}
	c.mu.Lock()
	replayed := len(c.turns)
	c.mu.Unlock()
	if replayed != 0 {
		t.Errorf("session/load replayed %d updates of a session without a turn", replayed)
	}
	res, err := conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: sdk.SessionId(id), Prompt: []sdk.ContentBlock{sdk.TextBlock("print two lines")}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt after session/load: %+v, %v", res, err)
	}
}
