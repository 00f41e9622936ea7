package strata

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
)

// permissions is the allowlist of one loop (docs/kiro.md, "Tool
// permissions"; docs/security.md, "Who may approve what"): it decides every
// call as kiro's eval_perm does — allow, ask or deny — for the loop's
// Config.PreApproved and Config.Denied, and stands between the loop and its
// approver to remember which calls a person approved (tool.Env
// PersonApproved). Its methods are safe for concurrent use.
type permissions struct {
	w        *Workspace
	env      *tool.Env
	mode     agent.Mode
	approver agent.Approver // the person (or client) asked; may be nil

	mu       sync.Mutex
	approved map[string]bool // tool_use ids a person approved
	always   map[string]bool // tools a person allowed always (names as called)
}

// permissions returns the allowlist of a loop on env in mode, asking
// approver, and points env.PersonApproved at it.
func (w *Workspace) permissions(env *tool.Env, mode agent.Mode, approver agent.Approver) *permissions {
	p := &permissions{w: w, env: env, mode: mode, approver: approver, approved: map[string]bool{}, always: map[string]bool{}}
	env.PersonApproved = p.personApproved
	return p
}

// apply sets cfg's PreApproved, Denied and Approver from p.
func (p *permissions) apply(cfg *agent.Config) {
	cfg.PreApproved, cfg.Denied = p.preApproved, p.denied
	if p.approver != nil {
		cfg.Approver = p
	}
}

// verdict decides call c: Options.Tools marked PreApproved, the agent's allowedTools (or,
// for the default agent, the read-only built-ins), kiro's never-asking
// built-ins and trusted sub-agents allow; execute_bash goes through
// tool.CommandPermission, the file tools through tool.PathPermission; a
// tool a person allowed always is allowed unless the verdict needs a
// person.
func (p *permissions) verdict(c llm.Block) tool.Verdict {
	w, cfg := p.w, p.w.agent.Config
	if w.extraNames()[c.Name] {
		// The program's own tools (Options.Tools) are asked about like a
		// built-in unless their tool.Traits say PreApproved.
		v := tool.Verdict{Permission: tool.Ask}
		if w.preApprovedExtras()[c.Name] {
			v.Permission = tool.Allow
		}
		return p.remembered(c, v)
	}
	auto, canonical := readOnlyBuiltins[c.Name], c.Name
	if cfg != nil {
		name := w.configName(c.Name)
		auto = cfg.ToolAutoApproved(name) || noAcceptance[c.Name] || w.trustedSubAgent(c)
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
	return p.remembered(c, v)
}

// remembered allows a call v would ask about when a person allowed its tool
// always, unless the call needs a person of its own.
func (p *permissions) remembered(c llm.Block, v tool.Verdict) tool.Verdict {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v.Permission == tool.Ask && !v.Person && p.always[c.Name] {
		v.Permission = tool.Allow
	}
	return v
}

// preApproved is Config.PreApproved: the verdict allows c.
func (p *permissions) preApproved(c llm.Block) bool { return p.verdict(c).Permission == tool.Allow }

// denied is Config.Denied: the verdict denies c, or c needs a person and
// nobody is asked (mode all, or no approver).
func (p *permissions) denied(c llm.Block) string {
	v := p.verdict(c)
	switch {
	case v.Permission == tool.Deny:
		return v.Reason
	case v.Person && (p.mode == agent.ModeAll || p.approver == nil):
		return v.Reason + "; only a person's approval of this call allows that, and nobody is asked (mode " + string(p.mode) + ")"
	}
	return ""
}

// Approve asks the approver about a call the mode leaves open and records
// a person's yes for tool.Env.PersonApproved. An "always" answer is kept
// here, not in the loop, and never covers a call that needs a person; so
// the loop only ever hears "once". A tool allowed always is answered
// without asking (mode ask).
func (p *permissions) Approve(ctx context.Context, req agent.ApprovalRequest) (agent.Decision, error) {
	v := p.verdict(req.Call)
	p.mu.Lock()
	always := p.always[req.Call.Name] && !v.Person
	p.mu.Unlock()
	if always {
		return agent.AllowOnce, nil
	}
	d, err := p.approver.Approve(ctx, req)
	if err != nil || (d != agent.AllowOnce && d != agent.AllowAlways) {
		return d, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.approved[req.Call.ID] = true
	if d == agent.AllowAlways && !v.Person {
		p.always[req.Call.Name] = true
	}
	return agent.AllowOnce, nil
}

// personApproved reports whether a person approved the call id.
func (p *permissions) personApproved(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.approved[id]
}

// strataConfigPaths are strata's own configuration file and folder, which
// tool.Env.ConfigPaths protects from writes no person approved: the user
// config folder (config.yaml, trusted-workspaces.json; docs/config.md) and
// $STRATA_CONFIG.
func strataConfigPaths() []string {
	var out []string
	if dir, err := os.UserConfigDir(); err == nil {
		out = append(out, filepath.Join(dir, "strata"))
	}
	if f := os.Getenv("STRATA_CONFIG"); f != "" {
		out = append(out, f)
	}
	return out
}
