package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/strata-agent/strata/agent"
)

// remoteChatHelp is /help's text in 'strata chat --temporal'.
const remoteChatHelp = `commands (chat --temporal):
  /help               this list
  /mode [MODE]        show the approval mode, or set it for the next prompts: ask, allowlist, all
  /steer TEXT         queue TEXT for the running prompt's next model call
  /exit               end the chat and the session workflow (the session stays stored on the workers)
A tool approval is answered by the next line: y (once), a (always), n (no), N (never).`

// remoteChat is 'strata chat --temporal' in line mode: each line of in is a
// prompt sent to the session workflow as an update, its events printed as
// they arrive; a tool approval the workflow waits for is asked on msg and
// answered by the next line; "/steer TEXT" (or, on a terminal, any line
// typed while a prompt runs) steers the running prompt. End of input or
// /exit ends the session workflow.
func remoteChat(ctx context.Context, f runFlags, t temporalFlags, in io.Reader, msg io.Writer) error {
	rs, closeClient, err := startRemote(ctx, f, t)
	if err != nil {
		return err
	}
	defer closeClient()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	interactive := isTerminal(in)
	lines, _ := promptLines(ctx, in)
	rs.Approver = lineApprover{lines: lines, msg: msg}
	if interactive {
		rs.steer = lines
	}
	cmds := newRemoteCommands(rs, f, t)
	var total agent.Result
	var chatErr error
	for chatErr == nil {
		if interactive {
			fmt.Fprint(msg, "› ")
		}
		text, ok := <-lines
		if !ok || text == "/exit" {
			break
		}
		if text == "" || cmds.run(ctx, msg, text) {
			continue
		}
		res, err := rs.prompt(ctx, text)
		if res != nil {
			total.Turns += res.Turns
			total.Usage = total.Usage.Add(res.Usage)
			total.Message, total.StopReason = res.Message, res.StopReason
		}
		switch {
		case ctx.Err() != nil:
			chatErr = ctx.Err()
		case err != nil:
			fmt.Fprintf(msg, "\nstrata: %v\n", err)
		}
		rs.out.finish()
		fmt.Fprintln(os.Stdout)
	}
	if err := rs.dc.End(context.WithoutCancel(ctx), rs.ID); err != nil && chatErr == nil {
		chatErr = fmt.Errorf("ending the session workflow: %w", err)
	}
	total.Usage = total.Usage.Add(rs.pings) // the pings seen up to the last prompt, as withKeepAlive in process
	if f.format == "text" {
		fmt.Fprintf(os.Stderr, "[temporal · %d model call(s) · tokens: input %d, output %d · session %s]\n",
			total.Turns, total.Usage.Input, total.Usage.Output, rs.ID)
	}
	return rs.interrupted(ctx, chatErr)
}

// lineApprover answers a remote session's approvals from the chat's input
// lines: the question goes to msg, the next line is the answer (y once, a
// always, n no, N never). End of input rejects.
type lineApprover struct {
	lines <-chan string
	msg   io.Writer
}

// Approve asks for r and reads the answer.
func (l lineApprover) Approve(ctx context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	for {
		fmt.Fprintf(l.msg, "\n? allow %s %s  [y] once  [a] always  [n] no  [N] never: ", r.Call.Name, compactJSON(r.Call.Input))
		var line string
		var ok bool
		select {
		case line, ok = <-l.lines:
		case <-ctx.Done():
			return agent.RejectOnce, ctx.Err()
		}
		if !ok {
			return agent.RejectOnce, fmt.Errorf("tool %s needs approval but the input ended", r.Call.Name)
		}
		switch strings.TrimSpace(line) {
		case "y", "Y", "yes":
			return agent.AllowOnce, nil
		case "a", "A", "always":
			return agent.AllowAlways, nil
		case "n", "no":
			return agent.RejectOnce, nil
		case "N", "never":
			return agent.RejectAlways, nil
		}
		fmt.Fprintf(l.msg, "answer y, a, n or N\n")
	}
}

// remoteCommands are the slash commands of chat --temporal
// (remoteChatHelp but /exit), in line mode and on the full screen alike.
type remoteCommands struct {
	rs   *remoteSession
	mode string // the approval mode /mode shows
}

// newRemoteCommands returns rs's commands; /mode shows f's --approve when
// it was given, else says the workers' applies.
func newRemoteCommands(rs *remoteSession, f runFlags, t temporalFlags) *remoteCommands {
	c := &remoteCommands{rs: rs, mode: "the workers' --approve"}
	if t.changed != nil && t.changed("approve") {
		c.mode = f.approve
	}
	return c
}

// run carries out text when it is a command, its answer written to w, and
// reports whether it was one ("//…" is a prompt starting with "/").
func (c *remoteCommands) run(ctx context.Context, w io.Writer, text string) bool {
	switch arg, isSteer := strings.CutPrefix(text, "/steer "); {
	case text == "/help":
		fmt.Fprintln(w, remoteChatHelp)
	case text == "/mode" || strings.HasPrefix(text, "/mode "):
		c.mode = remoteMode(ctx, c.rs, w, c.mode, strings.TrimSpace(strings.TrimPrefix(text, "/mode")))
	case isSteer:
		if err := c.rs.dc.Steer(ctx, c.rs.ID, strings.TrimSpace(arg)); err != nil {
			fmt.Fprintf(w, "strata: steering: %v\n", err)
		} else {
			fmt.Fprintln(w, "steering: queued for the next model call")
		}
	case strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "//"):
		fmt.Fprintf(w, "unknown command %s in chat --temporal (/help lists them)\n", text)
	default:
		return false
	}
	return true
}

// remoteMode is /mode in chat --temporal: without arg it says the mode
// (current), else it sets the session's mode for its next prompts and
// returns the new one.
func remoteMode(ctx context.Context, rs *remoteSession, msg io.Writer, current, arg string) string {
	if arg == "" {
		fmt.Fprintf(msg, "approval mode: %s\n", current)
		return current
	}
	m, err := approvalMode(arg)
	if err == nil {
		err = rs.dc.SetMode(ctx, rs.ID, m)
	}
	if err != nil {
		fmt.Fprintf(msg, "strata: /mode: %v\n", err)
		return current
	}
	fmt.Fprintf(msg, "approval mode: %s (from the next prompt)\n", m)
	return string(m)
}
