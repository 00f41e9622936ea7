package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
)

// Preview returns what an approved tool call will do, for the approval
// question (docs/cli.md, "chat"): for fs_write the unified diff of the
// edit (tool.FSWrite.Preview, read through the workspace's sandbox).
// ok is false when there is nothing to preview; err says why a preview
// failed (the call is then shown by its input).
type Preview func(call llm.Block) (diff string, ok bool, err error)

// callInput is the shell command of an execute_bash call, else its input
// as JSON on one line (no HTML escaping: "a > b", not "a \u003e b").
func callInput(c llm.Block) string {
	if cmd, ok := shellCommand(c); ok {
		return "$ " + cmd
	}
	return compactJSON(c.Input)
}

// shellCommand is execute_bash's command, when c is such a call.
func shellCommand(c llm.Block) (string, bool) {
	if c.Name != "execute_bash" {
		return "", false
	}
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(c.Input, &in) != nil || in.Command == "" {
		return "", false
	}
	return in.Command, true
}

// compactJSON renders raw on one line without HTML escaping.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return unescapeHTML(b.String())
}

// prettyJSON renders raw indented by two spaces without HTML escaping.
func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return unescapeHTML(b.String())
}

// unescapeHTML undoes encoding/json's HTML escapes (\u003c, \u003e,
// \u0026), which a provider's JSON may carry, for display.
func unescapeHTML(s string) string {
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(s)
}

// question is the approval block shown before the decision: what the call
// will do (the shell command as text, the diff of an edit, other inputs
// pretty-printed), and the diff as a separate entry when there is one.
func question(c llm.Block, preview Preview) (ask, diff string) {
	if cmd, ok := shellCommand(c); ok {
		return fmt.Sprintf("? %s wants to run:\n$ %s", c.Name, cmd), ""
	}
	if preview != nil {
		d, ok, err := preview(c)
		switch {
		case err != nil:
			return fmt.Sprintf("? %s (no preview: %v):\n%s", c.Name, err, prettyJSON(c.Input)), ""
		case ok:
			return fmt.Sprintf("? %s wants to make this change:", c.Name), d
		}
	}
	return fmt.Sprintf("? %s wants to run with:\n%s", c.Name, prettyJSON(c.Input)), ""
}

// answerText is a decision in words, for the transcript.
func answerText(name string, d agent.Decision) string {
	switch d {
	case agent.AllowOnce:
		return "→ allowed once"
	case agent.AllowAlways:
		return fmt.Sprintf("→ allowed: %s runs without asking for the rest of this chat", name)
	case agent.RejectAlways:
		return fmt.Sprintf("→ denied: %s is refused without asking for the rest of this chat", name)
	}
	return "→ denied"
}

// approvalKeys are the answers to an approval question.
var approvalKeys = map[string]agent.Decision{
	"y": agent.AllowOnce, "a": agent.AllowAlways, "n": agent.RejectOnce, "esc": agent.RejectOnce, "N": agent.RejectAlways, "shift+n": agent.RejectAlways,
}

// approvalPrompt is the line under the transcript while a question waits.
func approvalPrompt(name string) string {
	return fmt.Sprintf("allow %s?  [y] once  [a] always  [n] no  [N] never  (PgUp/PgDn scroll)", name)
}
