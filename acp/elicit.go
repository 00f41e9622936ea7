package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata/mcp"
)

// Elicitor forwards MCP servers' forms to the ACP client as
// elicitation/create (form mode; unstable in ACP, offered by clients whose
// initialize capabilities include elicitation.form), and declines them with
// a warning when the client does not take them (docs/mcp-auth.md,
// "Elicitation"). It is made before the workspace opens (its MCP servers
// are launched then) and bound to the connection by ServeWith
// (ServeOptions.Elicit).
type Elicitor struct {
	// Warn receives the reason of a decline (nil = silent).
	Warn func(string)

	mu sync.Mutex
	s  *server
}

// Elicit implements mcp.Elicitor.
func (e *Elicitor) Elicit(ctx context.Context, el mcp.Elicitation) (mcp.ElicitAnswer, error) {
	e.mu.Lock()
	s := e.s
	e.mu.Unlock()
	var caps sdk.ClientCapabilities
	if s != nil {
		s.mu.Lock()
		caps = s.caps
		s.mu.Unlock()
	}
	if s == nil || caps.Elicitation == nil || caps.Elicitation.Form == nil {
		return mcp.Decline(e.Warn, "the ACP client does not take forms (no elicitation.form capability)").Elicit(ctx, el)
	}
	var schema sdk.UnstableElicitationSchema
	if len(el.Schema) > 0 {
		if err := json.Unmarshal(el.Schema, &schema); err != nil {
			return mcp.ElicitAnswer{}, fmt.Errorf("elicitation schema from %q: %w", el.Server, err)
		}
	}
	resp, err := s.conn.UnstableCreateElicitation(ctx, sdk.UnstableCreateElicitationRequest{
		Form: &sdk.UnstableCreateElicitationForm{Mode: "form", Message: el.Message, RequestedSchema: schema,
			Meta: map[string]any{"strata.mcpServer": el.Server}},
	})
	switch {
	case err != nil:
		return mcp.ElicitAnswer{}, fmt.Errorf("ACP client's elicitation/create: %w", err)
	case resp.Accept != nil:
		return mcp.ElicitAnswer{Action: "accept", Content: resp.Accept.Content}, nil
	case resp.Decline != nil:
		return mcp.ElicitAnswer{Action: "decline"}, nil
	}
	return mcp.ElicitAnswer{Action: "cancel"}, nil
}

// bind points e at the connection s serves.
func (e *Elicitor) bind(s *server) {
	if e == nil {
		return
	}
	e.mu.Lock()
	e.s = s
	e.mu.Unlock()
}
