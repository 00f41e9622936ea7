package acp_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/acp"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/internal/mcptest"
)

// formClient answers elicitation/create (ACP's unstable form elicitation)
// with age 41 and records the requests.
type formClient struct {
	acpClient
	mu   sync.Mutex
	asks []sdk.UnstableCreateElicitationRequest
}

func (c *formClient) UnstableCreateElicitation(_ context.Context, r sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
	c.mu.Lock()
	c.asks = append(c.asks, r)
	c.mu.Unlock()
	return sdk.UnstableCreateElicitationResponse{Accept: &sdk.UnstableCreateElicitationAccept{Action: "accept", Content: map[string]any{"age": 41}}}, nil
}

// An MCP server's form (a real go-sdk server on 127.0.0.1 the client passes
// in session/new) goes to an ACP client that offers elicitation.form, and
// its answer, with the schema's defaults filled in, is the tool result the
// model gets; a client without the capability gets nothing and the form is
// declined (docs/mcp-auth.md, "Elicitation").
func TestMCPFormsGoToTheACPClient(t *testing.T) {
	url := mcptest.Asker(t, json.RawMessage(`{"type":"object","properties":{
		"age":{"type":"integer","default":30},"name":{"type":"string","default":"John Doe"}}}`))
	for _, c := range []struct {
		caps sdk.ClientCapabilities
		want string
		asks int
	}{
		{sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}}},
			`{\"action\":\"accept\",\"content\":{\"age\":41,\"name\":\"John Doe\"}}`, 1},
		{sdk.ClientCapabilities{}, `{\"action\":\"decline\"}`, 0},
	} {
		dir := t.TempDir()
		model := mcptest.NewToolModel(t, "ask___ask")
		var mu sync.Mutex
		var warned []string
		elicit := &acp.Elicitor{Warn: func(s string) { mu.Lock(); warned = append(warned, s); mu.Unlock() }}
		ws, err := strata.Open(context.Background(), strata.Options{Dir: dir, Layout: "flat", ProviderName: "anthropic", APIKey: "test",
			BaseURL: model.URL, Model: "claude-sonnet-4-5", MCPElicit: elicit})
		must(t, err)
		cr, aw := io.Pipe()
		ar, cw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() {
			served <- acp.ServeWith(ctx, ws, acp.ServeOptions{Mode: agent.ModeAll, Elicit: elicit}, cr, cw)
		}()
		client := &formClient{}
		conn := sdk.NewClientSideConnection(client, aw, ar)
		_, err = conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: c.caps})
		must(t, err)
		ns, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{
			{Http: &sdk.McpServerHttpInline{Name: "ask", Type: "http", Url: url, Headers: []sdk.HttpHeader{}}}}})
		must(t, err)
		_, err = conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("fill in the form")}})
		must(t, err)
		cancel()
		aw.Close()
		<-served
		ws.Close()
		bodies := model.Bodies()
		mu.Lock()
		if len(bodies) != 2 || !strings.Contains(bodies[1], c.want) {
			t.Errorf("caps %+v: the tool result lacks %s:\n%v", c.caps, c.want, bodies)
		}
		if c.asks == 0 && (len(warned) != 1 || !strings.Contains(warned[0], "elicitation.form")) {
			t.Errorf("decline warning %q", warned)
		}
		mu.Unlock()
		client.mu.Lock()
		if len(client.asks) != c.asks || c.asks == 1 && (client.asks[0].Form == nil || client.asks[0].Form.Message != "Your details?" ||
			client.asks[0].Form.RequestedSchema.Properties["age"] == nil) {
			t.Errorf("client asked %+v", client.asks)
		}
		client.mu.Unlock()
	}
}
