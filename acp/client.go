package acp

import (
	"context"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata/tool"
)

// clientFiles is tool.Editor over the client's fs/read_text_file and
// fs/write_text_file, used when the client offers both (initialize's
// clientCapabilities.fs).
type clientFiles struct {
	conn    *sdk.AgentSideConnection
	session sdk.SessionId
}

// ReadTextFile reads path through the client (fs/read_text_file).
func (c clientFiles) ReadTextFile(ctx context.Context, path string) (string, error) {
	r, err := c.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: c.session, Path: path})
	if err != nil {
		return "", fmt.Errorf("client fs/read_text_file %s: %w", path, err)
	}
	return r.Content, nil
}

// WriteTextFile writes path through the client (fs/write_text_file).
func (c clientFiles) WriteTextFile(ctx context.Context, path, content string) error {
	if _, err := c.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: c.session, Path: path, Content: content}); err != nil {
		return fmt.Errorf("client fs/write_text_file %s: %w", path, err)
	}
	return nil
}

// clientTerminal is tool.Terminal over the client's terminal/* methods, used
// when the client offers them (clientCapabilities.terminal). The terminal is
// embedded in the tool call (tool_call_update with terminal content) so the
// editor shows it live, and released when the command is done.
type clientTerminal struct {
	conn    *sdk.AgentSideConnection
	session sdk.SessionId
}

// Run runs `bash -c command` in a client terminal: create, embed in the
// tool call, wait for exit (killing it when ctx ends), read the output,
// release.
func (c clientTerminal) Run(ctx context.Context, callID, command, dir string, limit int) (tool.TerminalResult, error) {
	t, err := c.conn.CreateTerminal(ctx, sdk.CreateTerminalRequest{
		SessionId: c.session, Command: "bash", Args: []string{"-c", command}, Cwd: &dir, OutputByteLimit: &limit,
		Env: []sdk.EnvVariable{{Name: "PAGER", Value: "cat"}, {Name: "GIT_PAGER", Value: "cat"}, {Name: "GIT_TERMINAL_PROMPT", Value: "0"}},
	})
	if err != nil {
		return tool.TerminalResult{}, fmt.Errorf("terminal/create: %w", err)
	}
	id := sdk.TerminalOutputRequest{SessionId: c.session, TerminalId: t.TerminalId}
	bg := context.WithoutCancel(ctx)
	defer c.conn.ReleaseTerminal(bg, sdk.ReleaseTerminalRequest{SessionId: c.session, TerminalId: t.TerminalId})
	if callID != "" {
		_ = c.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: c.session,
			Update: sdk.UpdateToolCall(sdk.ToolCallId(callID), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(t.TerminalId)}))})
	}
	_, werr := c.conn.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: c.session, TerminalId: t.TerminalId})
	if ctx.Err() != nil {
		_, _ = c.conn.KillTerminal(bg, sdk.KillTerminalRequest{SessionId: c.session, TerminalId: t.TerminalId})
	}
	out, oerr := c.conn.TerminalOutput(bg, id)
	r := tool.TerminalResult{Output: out.Output, Truncated: out.Truncated}
	if s := out.ExitStatus; s != nil {
		r.ExitCode = s.ExitCode
		if s.Signal != nil {
			r.Signal = *s.Signal
		}
	}
	switch {
	case ctx.Err() != nil:
		return r, ctx.Err()
	case werr != nil:
		return r, fmt.Errorf("terminal/wait_for_exit: %w", werr)
	case oerr != nil:
		return r, fmt.Errorf("terminal/output: %w", oerr)
	}
	return r, nil
}
