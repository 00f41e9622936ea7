package acp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/workflow"
)

// workflowCommand reports whether a prompt is "/workflow FILE [NAME=VALUE]..."
// and returns what follows the command.
func workflowCommand(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if t != "/workflow" && !strings.HasPrefix(t, "/workflow ") {
		return "", false
	}
	return strings.TrimSpace(strings.TrimPrefix(t, "/workflow")), true
}

// workflowCommandEntry is the /workflow command in available_commands_update.
var workflowCommandEntry = sdk.AvailableCommand{Name: "workflow",
	Description: "Run a stage workflow file in this session (docs/workflows.md); its audit events stream as agent messages",
	Input:       &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: "file [name=value]..."}}}

// runWorkflow runs "/workflow FILE [NAME=VALUE]..." in session x
// (workflow.Run; FILE relative to the workspace): each audit event and each
// stage tool call is sent as an agent message line, grant interactions ask
// the client through session/request_permission (allow once, allow for the
// stage, reject), and session/cancel stops it (strict cancellation; the
// state stays resumable). A workflow that ends with outcome fail ends the
// turn normally, its last line saying so.
func (s *server) runWorkflow(ctx context.Context, x *sess, args string) (sdk.PromptResponse, error) {
	fields := strings.Fields(args)
	if len(fields) == 0 {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"prompt": "/workflow needs a workflow file: /workflow FILE [NAME=VALUE]..."})
	}
	path := fields[0]
	if !filepath.IsAbs(path) {
		path = filepath.Join(x.s.Workspace().Dir(), path)
	}
	d, err := workflow.Load(path)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"prompt": "/workflow", "error": err.Error()})
	}
	inputs := map[string]string{}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"prompt": "/workflow", "error": fmt.Sprintf("input %q is not NAME=VALUE", f)})
		}
		inputs[k] = v
	}
	if _, err := d.Resolve(inputs); err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"prompt": "/workflow", "error": err.Error()})
	}
	s.mu.Lock()
	if x.cancel != nil {
		s.mu.Unlock()
		return sdk.PromptResponse{}, sdk.NewInvalidRequest(map[string]any{"sessionId": x.id(), "error": "a prompt is running in this session; /workflow runs between prompts"})
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	x.cancel, x.done = cancel, done
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		x.cancel = nil
		close(done)
		s.mu.Unlock()
		cancel()
	}()
	say := func(line string) { x.mapper.send(sdk.UpdateAgentMessageText(line + "\n")) }
	o := workflow.Options{
		Interactor: grantAsker{&permission{conn: s.conn, session: sdk.SessionId(x.id())}},
		OnEvent:    func(e workflow.Event) { say("▸ " + e.String()) },
		OnLoopEvent: func(stage string, e event.Event) {
			if e.Kind == event.ToolExecutionEnd && e.ToolCall != nil {
				say(fmt.Sprintf("  %s: %s → %s", stage, e.ToolCall.Name, e.Outcome))
			}
		},
	}
	st, err := workflow.Run(ctx, x.s.Workspace(), x.s, d, inputs, o)
	switch {
	case ctx.Err() != nil:
		say(fmt.Sprintf("Workflow %s interrupted; `strata workflow resume %s` goes on from its last completed stage.", d.Name, x.id()))
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case err != nil && !errors.Is(err, workflow.ErrFailed):
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	say(fmt.Sprintf("Workflow %s ended: %s.", d.Name, st.Outcome))
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

// grantAsker answers grantStageTool interactions through the client's
// permission request: allow once grants the call, allow always grants the
// tool for the rest of the stage, anything else denies it.
type grantAsker struct{ p *permission }

func (g grantAsker) GrantStageTool(ctx context.Context, r workflow.GrantRequest) (workflow.GrantAnswer, error) {
	d, err := g.p.Approve(ctx, agent.ApprovalRequest{Call: r.Call})
	switch {
	case err != nil:
		return workflow.GrantDeny, err
	case d == agent.AllowOnce:
		return workflow.GrantOnce, nil
	case d == agent.AllowAlways:
		return workflow.GrantStage, nil
	}
	return workflow.GrantDeny, nil
}
