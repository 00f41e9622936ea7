// Package permission is the allowlist of one agent loop: it decides every
// tool call as kiro's eval_perm does — allow, ask or deny — from the agent
// file's allowedTools and toolsSettings (or, for strata's default agent,
// the read-only built-ins), and stands between the loop and its approver
// to remember which calls a person approved (docs/kiro.md, "Tool
// permissions"; docs/security.md, "Who may approve what").
package permission

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
)

// Allowlist is the allowlist of one loop (docs/kiro.md, "Tool
// permissions"; docs/security.md, "Who may approve what"): it decides every
// call as kiro's eval_perm does — allow, ask or deny — for the loop's
// Config.PreApproved and Config.Denied, and stands between the loop and its
// approver to remember which calls a person approved (tool.Env
// PersonApproved). Its methods are safe for concurrent use.
type Allowlist struct {
	src      Source
	env      *tool.Env
	mode     agent.Mode
	approver agent.Approver // the person (or client) asked; may be nil

	mu       sync.Mutex
	approved map[string]bool // tool_use ids a person approved
}

// Source is what an Allowlist reads of its workspace, as functions: the
// workspace's agent and its MCP tool names may change while a loop runs.
type Source struct {
	// Agent is the agent file's configuration (nil = strata's default
	// agent: only ReadOnlyBuiltins run without asking).
	Agent func() *config.Agent
	// ConfigName maps a model-facing tool name to the name agent configs
	// use (an MCP tool's @server/tool).
	ConfigName func(name string) string
	// Extra reports whether name is one of the program's own tools
	// (strata.Options.Tools) and whether its tool.Traits say PreApproved.
	Extra func(name string) (extra, preApproved bool)
	// TrustedSubAgent reports whether a use_subagent call names an agent
	// the agent file's trustedAgents lists.
	TrustedSubAgent func(c llm.Block) bool
}

// ReadOnlyBuiltins run without asking in allowlist mode when no agent
// config says otherwise (they cannot change the workspace). thinking,
// introspect and knowledge (show and search only in strata) also run
// without asking for agent files, as the Amazon Q Developer CLI's
// requires_acceptance is false for them (NoAcceptance).
var ReadOnlyBuiltins = map[string]bool{"fs_read": true, "grep": true, "glob": true, "thinking": true, "introspect": true, "knowledge": true}

// NoAcceptance are the kiro built-ins that never ask, whatever
// allowedTools says: they cannot change anything.
var NoAcceptance = map[string]bool{"thinking": true, "introspect": true, "knowledge": true}

// New returns the allowlist of a loop on env in mode, asking approver (nil
// = nobody is asked), and points env.PersonApproved at it.
func New(src Source, env *tool.Env, mode agent.Mode, approver agent.Approver) *Allowlist {
	p := &Allowlist{src: src, env: env, mode: mode, approver: approver, approved: map[string]bool{}}
	env.PersonApproved = p.personApproved
	return p
}

// Apply sets cfg's PreApproved, Denied, PersonOnly and Approver from p.
func (p *Allowlist) Apply(cfg *agent.Config) {
	cfg.PreApproved, cfg.Denied, cfg.PersonOnly = p.preApproved, p.denied, p.personOnly
	if p.approver != nil {
		cfg.Approver = p
	}
}

// Verdict decides call c: Options.Tools marked PreApproved, the agent's allowedTools (or,
// for the default agent, the read-only built-ins), kiro's never-asking
// built-ins and trusted sub-agents allow; execute_bash goes through
// tool.CommandPermission, the file tools through tool.PathPermission. What
// a person allowed or rejected always is the loop's (agent.State.Always,
// Never), not the verdict's.
func (p *Allowlist) Verdict(c llm.Block) tool.Verdict {
	cfg := p.src.Agent()
	if extra, pre := p.src.Extra(c.Name); extra {
		// The program's own tools (Options.Tools) are asked about like a
		// built-in unless their tool.Traits say PreApproved.
		v := tool.Verdict{Permission: tool.Ask}
		if pre {
			v.Permission = tool.Allow
		}
		return v
	}
	auto, canonical := ReadOnlyBuiltins[c.Name], c.Name
	if cfg != nil {
		name := p.src.ConfigName(c.Name)
		auto = cfg.ToolAutoApproved(name) || NoAcceptance[c.Name] || p.src.TrustedSubAgent(c)
		canonical = cfg.CanonicalName(name)
	}
	v := tool.Verdict{Permission: tool.Ask}
	if auto {
		v.Permission = tool.Allow
	}
	switch canonical {
	case "execute_bash":
		var in struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(c.Input, &in) == nil {
			v = tool.CommandPermission(p.env, in.Command, auto)
		}
	case "fs_read", "fs_write", "grep", "glob":
		if paths, access, ok := tool.CallPaths(canonical, c.Input); ok {
			v = tool.PathPermission(p.env, access, paths, auto)
			if v.Permission == tool.Allow && !auto && access == tool.AccessRead {
				v.Permission = tool.Ask // a read tool allowedTools does not name still asks
			}
		}
	}
	return v
}

// preApproved is Config.PreApproved: the verdict allows c.
func (p *Allowlist) preApproved(c llm.Block) bool { return p.Verdict(c).Permission == tool.Allow }

// denied is Config.Denied: the verdict denies c, or c needs a person and
// nobody is asked (mode all, or no approver).
func (p *Allowlist) denied(c llm.Block) string {
	v := p.Verdict(c)
	switch {
	case v.Permission == tool.Deny:
		return v.Reason
	case v.Person && (p.mode == agent.ModeAll || p.approver == nil):
		return v.Reason + "; only a person's approval of this call allows that, and nobody is asked (mode " + string(p.mode) + ")"
	}
	return ""
}

// personOnly is Config.PersonOnly: the verdict needs a person's approval
// of c itself.
func (p *Allowlist) personOnly(c llm.Block) bool { return p.Verdict(c).Person }

// Approve asks the approver about a call the mode leaves open and records
// a person's yes for tool.Env.PersonApproved. An "always" answer goes to
// the loop, which keeps it in its state (agent.State.Always: it travels
// with the conversation's checkpoint) and never lets it cover a call that
// needs a person (Config.PersonOnly).
func (p *Allowlist) Approve(ctx context.Context, req agent.ApprovalRequest) (agent.Decision, error) {
	d, err := p.approver.Approve(ctx, req)
	if err != nil || (d != agent.AllowOnce && d != agent.AllowAlways) {
		return d, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.approved[req.Call.ID] = true
	return d, nil
}

// personApproved reports whether a person approved the call id.
func (p *Allowlist) personApproved(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.approved[id]
}
