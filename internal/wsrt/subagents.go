package wsrt

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/strata-agent/strata/agentfile"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/tool"
)

// subagents are the workspaces use_subagent delegates to, one per agent
// name, opened on first use and closed with the parent workspace. Each is a
// whole agent — its own prompt and resources, tools, MCP servers, hooks
// and model — sharing the parent's directory, provider, store and options.
type subagents struct {
	mu sync.Mutex
	ws map[string]*Workspace
}

// subAgentSettings returns the agent's toolsSettings for use_subagent
// (kiro: "subagent": {availableAgents, trustedAgents}); zero for the
// default agent.
func (w *Workspace) subAgentSettings() config.ToolSettings {
	if w.agent.Config == nil {
		return config.ToolSettings{}
	}
	return w.agent.Config.ToolSettings(agent.SubAgentToolName)
}

// listed reports whether name matches one of patterns (an exact name or a
// path.Match pattern such as "review*").
func listed(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok || p == name {
			return true
		}
	}
	return false
}

// availableSubAgents lists the workspace's agents (FindAgents) that
// availableAgents names, with their descriptions, for use_subagent's
// description. Agent files that do not load are left out.
func (w *Workspace) availableSubAgents() []agent.SubAgent {
	st := w.subAgentSettings()
	if len(st.AvailableAgents) == 0 {
		return nil
	}
	var out []agent.SubAgent
	seen := map[string]bool{}
	for _, f := range agentfile.Find(w.dir) {
		if seen[f.Name] || !listed(st.AvailableAgents, f.Name) {
			continue
		}
		seen[f.Name] = true
		a, err := config.LoadAgentWith(f.Path, config.LoadOptions{ReadFile: agentfile.ContextReader(w.dir, nil)}) // its prompt file too passes the sandbox
		if err != nil {
			continue
		}
		out = append(out, agent.SubAgent{Name: f.Name, Description: a.Description})
	}
	return out
}

// trustedSubAgent reports whether a use_subagent call names an agent of
// trustedAgents: such a call runs without asking (kiro's subagent
// settings).
func (w *Workspace) trustedSubAgent(c llm.Block) bool {
	if c.Name != agent.SubAgentToolName {
		return false
	}
	var in struct{ Agent string }
	if json.Unmarshal(c.Input, &in) != nil || in.Agent == "" {
		return false
	}
	return listed(w.subAgentSettings().TrustedAgents, in.Agent)
}

// childWorkspace returns the workspace of the agent name for use_subagent.
// name must be listed in availableAgents; the error says which are. The
// agent file is loaded, validated and trust-checked at every spawn, not
// only the first: a workspace opened earlier is reused only while the
// file's commands and permissions are unchanged; otherwise a new one is
// opened (its MCP servers launched, its agentSpawn hooks run), whose trust
// check sees the file as Changed when it differs from what the workspace
// held when it opened (checkTrust). A replaced workspace is closed with
// the parent, as a call of another loop may still use it. outer is the
// calling loop's tool environment (the child's own reads stay inside it).
func (w *Workspace) childWorkspace(ctx context.Context, name string, outer *tool.Env) (*Workspace, error) {
	st := w.subAgentSettings()
	if !listed(st.AvailableAgents, name) {
		avail := "none"
		if len(st.AvailableAgents) > 0 {
			avail = strings.Join(st.AvailableAgents, ", ")
		}
		return nil, fmt.Errorf("agent %q is not available as a sub-agent: the agent's toolsSettings.subagent.availableAgents lists %s", name, avail)
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil, ErrClosed
	}
	if w.children == nil {
		w.children = &subagents{ws: map[string]*Workspace{}}
	}
	ch := w.children
	w.mu.Unlock()
	file, err := agentfile.Resolve(w.dir, name)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	_, hash, err := agentTrustHash(file, w.dir, w.opts) // validated at every spawn
	if err != nil {
		return nil, err
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if c := ch.ws[name]; c != nil && c.agentHash == hash {
		return c, nil
	}
	o := w.opts
	o.Agent = file
	c := &Workspace{opts: o, dir: w.dir, store: w.store, prov: w.prov.Borrow(), repo: w.repo, // same directory: the same repository context
		started: w.started, depth: w.depth + 1, outer: outer}
	if err := c.loadAgent(context.WithoutCancel(ctx)); err != nil {
		c.Close()
		return nil, err
	}
	if m := c.agent.Config.Model; m != "" && w.opts.Model == "" && w.opts.Provider == nil {
		c.prov.SetAgentModel(m) // kiro runs each agent on its own model
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		c.Close()
		return nil, ErrClosed
	}
	w.agentClosers = append(w.agentClosers, func() { c.Close() })
	ch.ws[name] = c
	return c, nil
}

// newChild builds use_subagent's child loops on the parent loop's bus,
// tool environment (narrowed: tool.Narrow), mode and approver, at most
// Options.MaxSubAgentDepth levels deep. With no agent name (or the current
// agent's) the child is the current agent again: self, a fresh layout
// instance and no use_subagent. Another name runs that agent of the
// workspace (childWorkspace) with its own loop configuration, tools and
// use_subagent included.
func (w *Workspace) newChild(self agent.Config, env *tool.Env, mode agent.Mode, approver agent.Approver) agent.NewChildFunc {
	return func(ctx context.Context, name string) (*agent.Agent, error) {
		if name == "" || (w.agent.Config != nil && name == w.agent.Config.Name) ||
			(w.agent.Config != nil && name == strings.TrimSuffix(pathBase(w.opts.Agent), ".json")) {
			c := self
			c.Hooks = w.loopHooks() // a task-context hook of the child's own
			layout, err := prompt.Lookup(w.opts.Layout)
			if err != nil {
				return nil, err
			}
			c.Layout = layout
			limitResponses(&c, w.opts)
			return agent.New(c)
		}
		if max := w.opts.maxSubAgentDepth(); w.depth+1 > max {
			return nil, fmt.Errorf("sub-agent depth limit reached: agent %q would run %d levels deep, over the limit of %d "+
				"(Options.MaxSubAgentDepth, config key subAgentDepth); do the task in this agent instead", name, w.depth+1, max)
		}
		cw, err := w.childWorkspace(ctx, name, env)
		if err != nil {
			return nil, err
		}
		prov, err := cw.client()
		if err != nil {
			return nil, err
		}
		// The child's own policy, narrowed by its parent's: the stricter
		// rule wins (docs/security.md, "Sub-agents").
		e := tool.Narrow(cw.env(env.Workdir), env)
		e.Editor, e.Terminal = env.Editor, env.Terminal
		cfg, err := cw.loopConfig(prov, e, self.Bus, mode, approver, nil)
		if err != nil {
			return nil, err
		}
		return agent.New(cfg)
	}
}

func pathBase(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}
