package main

import (
	"context"
	"fmt"
	"io"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/mcp"
)

// lineAsker is how chat's line mode on a terminal asks the person
// anything while a prompt runs — a tool approval (agent.Approver) or an MCP
// server's form (mcp.Elicitor, docs/mcp-auth.md, "Elicitation"). The chat
// loop reads every line of stdin, so a question is handed to it (requests)
// and answered with the lines typed next; nothing else reads the terminal,
// so an answer is never taken for a steering message or a prompt.
type lineAsker struct{ reqs chan lineQuestion }

// lineQuestion is one question: ask writes it to out and reads the answer
// with next, then the asker's goroutine goes on (done).
type lineQuestion struct {
	ctx  context.Context
	ask  func(out io.Writer, next func(context.Context) (string, error))
	done chan struct{}
}

func newLineAsker() *lineAsker { return &lineAsker{reqs: make(chan lineQuestion)} }

// run hands ask to the chat loop and waits until it was answered.
func (c *lineAsker) run(ctx context.Context, ask func(io.Writer, func(context.Context) (string, error))) error {
	q := lineQuestion{ctx: ctx, ask: ask, done: make(chan struct{})}
	select {
	case c.reqs <- q:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-q.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// requests is the channel questions arrive on; nil (never ready) for a nil
// c.
func (c *lineAsker) requests() <-chan lineQuestion {
	if c == nil {
		return nil
	}
	return c.reqs
}

// answer asks q on out, reading the answers from *lines (the chat's line
// channel; set to nil when input ends, which ends the question with
// io.EOF).
func (c *lineAsker) answer(q lineQuestion, out io.Writer, lines *chan string) {
	defer close(q.done)
	q.ask(out, func(ctx context.Context) (string, error) {
		if *lines == nil {
			return "", io.EOF
		}
		select {
		case l, ok := <-*lines:
			if !ok {
				*lines = nil
				return "", io.EOF
			}
			return l, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
}

// Elicit asks an MCP server's form with the lines typed next (mcp.LinePrompt).
func (c *lineAsker) Elicit(ctx context.Context, e mcp.Elicitation) (mcp.ElicitAnswer, error) {
	a := mcp.ElicitAnswer{Action: "cancel"}
	err := c.run(ctx, func(out io.Writer, next func(context.Context) (string, error)) {
		a, _ = mcp.LinePrompt{Out: out, Next: next}.Elicit(ctx, e) // LinePrompt never fails
	})
	return a, err
}

// Approve asks about a tool call as termApprover does, with the lines typed
// next: y = allow once, a = allow always (this tool, this run), n = reject.
// The end of input rejects the call.
func (c *lineAsker) Approve(ctx context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	d, derr := agent.RejectOnce, error(nil)
	err := c.run(ctx, func(out io.Writer, next func(context.Context) (string, error)) {
		for {
			fmt.Fprint(out, approvalQuestion(r))
			line, err := next(ctx)
			if err != nil {
				derr = fmt.Errorf("reading the answer: %w", err)
				return
			}
			if v, ok := parseDecision(line); ok {
				d = v
				return
			}
		}
	})
	if err != nil {
		return agent.RejectOnce, err
	}
	return d, derr
}
