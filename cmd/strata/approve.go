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
	return noTerminal{}
}

func (t *termApprover) Approve(ctx context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		fmt.Fprintf(os.Stderr, "\n? allow %s %s  [y] once  [a] always  [n] no: ", r.Call.Name, compactJSON(r.Call.Input))
		line, err := t.in.ReadString('\n')
		if err != nil {
			return agent.RejectOnce, fmt.Errorf("reading the answer: %w", err)
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return agent.AllowOnce, nil
		case "a", "always":
			return agent.AllowAlways, nil
		case "n", "no":
			return agent.RejectOnce, nil
		}
		if ctx.Err() != nil {
			return agent.RejectOnce, ctx.Err()
		}
	}
}

type noTerminal struct{}

func (noTerminal) Approve(_ context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	how := "allow it in the agent's allowedTools"
	if r.Call.Name == "execute_bash" {
		how = "allow the command in the agent's toolsSettings.execute_bash.allowedCommands"
	}
	return agent.RejectOnce, fmt.Errorf("tool %s needs approval but stdin is not a terminal to ask on: "+
		"pass --approve all, or %s", r.Call.Name, how)
}
