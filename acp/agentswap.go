package acp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/strata-agent/strata/agentfile"
)

// agentCommand reports whether a prompt is the "/agent NAME" or
// "/agent swap NAME" command (strata.AgentSwapName) and returns NAME (""
// when missing).
func agentCommand(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if t != "/agent" && !strings.HasPrefix(t, "/agent ") {
		return "", false
	}
	return agentfile.SwapName(strings.TrimPrefix(t, "/agent")), true
}

// agentCommandEntry is the /agent command in available_commands_update.
var agentCommandEntry = sdk.AvailableCommand{Name: "agent",
	Description: "Swap to another agent of the workspace: every MCP server is terminated and the new agent's launched; the conversation goes on",
	Input:       &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: "agent name"}}}

// swapAgent runs "/agent NAME" in session x, kiro's agent swap
// (strata.Session.SwapAgent): it answers with an agent message saying what
// runs now, then sends the new agent's slash commands. It is refused while
// the session's prompt runs or while other sessions share the workspace
// (the swap changes the workspace's agent and MCP servers under them).
func (s *server) swapAgent(ctx context.Context, x *sess, name string) (sdk.PromptResponse, error) {
	if name == "" {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"prompt": "/agent needs an agent name"})
	}
	s.mu.Lock()
	running, others := x.cancel != nil, len(s.sessions)-1
	s.mu.Unlock()
	switch {
	case running:
		return sdk.PromptResponse{}, sdk.NewInvalidRequest(map[string]any{"sessionId": x.id(), "error": "a prompt is running in this session; /agent swaps between prompts"})
	case others > 0:
		return sdk.PromptResponse{}, sdk.NewInvalidRequest(map[string]any{"sessionId": x.id(),
			"error": fmt.Sprintf("/agent swaps the agent of the whole workspace and %d other session(s) are open on it", others)})
	}
	if err := x.s.SwapAgent(ctx, name); err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"prompt": "/agent " + name, "error": err.Error()})
	}
	var srcs []PromptSource
	for _, m := range x.s.MCP() {
		srcs = append(srcs, m)
	}
	x.commands = commands(ctx, srcs)
	ws := x.s.Workspace()
	servers := 0
	if m := ws.MCP(); m != nil {
		servers = len(m.Statuses())
	}
	x.mapper.send(sdk.UpdateAgentMessageText(fmt.Sprintf("Switched to agent %s (model %s, %d MCP server(s)).", ws.Agent().Config.Name, ws.Model(), servers)))
	x.mapper.send(availableCommands(x.commands))
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}
