package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/strata-agent/strata/agent"
)

// termApprover asks on the terminal (stderr for the question, stdin for the
// answer): y = allow once, a = allow always (this tool, this run), n = reject.
type termApprover struct {
	mu sync.Mutex
	in *bufio.Reader
}

// terminalApprover returns the approver for --approve ask and allowlist
// misses: the terminal when stdin is one, else an approver that rejects with
// a reason saying how to allow the call.
func terminalApprover() agent.Approver {
	if isTerminal(os.Stdin) { // a terminal, not /dev/null
		return &termApprover{in: bufio.NewReader(os.Stdin)}
	}
	return &noTerminal{}
}

func (t *termApprover) Approve(ctx context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		fmt.Fprint(os.Stderr, approvalQuestion(r))
		line, err := t.in.ReadString('\n')
		if err != nil {
			return agent.RejectOnce, fmt.Errorf("reading the answer: %w", err)
		}
		if d, ok := parseDecision(line); ok {
			return d, nil
		}
		if ctx.Err() != nil {
			return agent.RejectOnce, ctx.Err()
		}
	}
}

// approvalQuestion is the question asked about r on a terminal.
func approvalQuestion(r agent.ApprovalRequest) string {
	return fmt.Sprintf("\n? allow %s %s  [y] once  [a] always  [n] no: ", r.Call.Name, compactJSON(r.Call.Input))
}

// parseDecision reads an answer to approvalQuestion; ok is false for
// anything else (the question is asked again).
func parseDecision(line string) (d agent.Decision, ok bool) {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return agent.AllowOnce, true
	case "a", "always":
		return agent.AllowAlways, true
	case "n", "no":
		return agent.RejectOnce, true
	}
	return "", false
}

// noTerminal rejects every call that needs approval (stdin is no
// terminal to ask on) and remembers them: the run then fails (err), so a
// script sees a non-zero exit instead of an answer made without the tools.
type noTerminal struct {
	mu     sync.Mutex
	denied []string // tool names, in order
}

func (n *noTerminal) Approve(_ context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	n.mu.Lock()
	n.denied = append(n.denied, r.Call.Name)
	n.mu.Unlock()
	return agent.RejectOnce, fmt.Errorf("tool %s needs approval but stdin is not a terminal to ask on: "+
		"pass --approve all, or %s", r.Call.Name, allowHow(r.Call.Name))
}

// allowHow says how to let tool run without asking.
func allowHow(tool string) string {
	if tool == "execute_bash" {
		return "allow the command in the agent's toolsSettings.execute_bash.allowedCommands"
	}
	return "allow it in the agent's allowedTools"
}

// err is the run's error when calls were denied for lack of a terminal.
func (n *noTerminal) err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.denied) == 0 {
		return nil
	}
	return fmt.Errorf("%d tool call(s) (%s) needed approval and were denied: stdin is not a terminal to ask on; "+
		"pass --approve all (or --approve allowlist with the tools in the agent's allowedTools) to let them run",
		len(n.denied), strings.Join(n.denied, ", "))
}
