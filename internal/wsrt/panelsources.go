package wsrt

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/strata-agent/strata/agentfile"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/internal/panelsrc"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/tool"
)

// fixedPanels is implemented by layouts that show Context Pilot's fixed
// panels (prompt/panels): the runtime gathers the panels' sources
// (prompt.Context.Todos, Agents, Logs) only for them, so other layouts send
// the same requests and cost no extra reads.
type fixedPanels interface{ FixedPanels() bool }

// wantsPanels reports whether l shows the fixed panels.
func wantsPanels(l prompt.Layout) bool {
	f, ok := l.(fixedPanels)
	return ok && f.FixedPanels()
}

// workspaceAgents lists the workspace's own agent files for the library
// panel (global agents under the home directory are left out: they differ
// per machine, and a request must not depend on who renders it).
func workspaceAgents(dir string) []prompt.LibraryEntry {
	var out []prompt.LibraryEntry
	for _, a := range agentfile.Find(dir) {
		if a.Scope != "workspace" {
			continue
		}
		desc := ""
		if ld, err := agentfile.Load(a.Path, dir); err == nil {
			desc = ld.Config.Description
		}
		p, err := filepath.Rel(dir, a.Path) // a workspace agent is inside dir
		if err != nil {
			p = a.Path
		}
		out = append(out, prompt.LibraryEntry{Name: a.Name, Description: desc, Path: filepath.ToSlash(p)})
	}
	return out
}

// panelSources adds to cfg what the panels show: the workspace's agents
// (read once), the loop's log and console (from bus, when there is one)
// and, before every request, the todo_list lists read from env's
// workspace and the git results (run again every panelsrc.GitRefresh). A list that
// cannot be read is logged in the Logs panel, not fatal.
func (w *Workspace) panelSources(cfg *agent.Config, env *tool.Env, bus *event.Bus) {
	if !wantsPanels(cfg.Layout) {
		return
	}
	cfg.Context.Agents = workspaceAgents(w.dir)
	log, console := &panelsrc.Log{}, &panelsrc.Console{}
	if bus != nil {
		bus.SubscribeSync(log.Observe)
		bus.SubscribeSync(console.Observe)
	}
	git := &panelsrc.Git{Dir: w.dir}
	now := w.opts.Now
	if now == nil {
		now = time.Now
	}
	// The sources' memory (the last git run, the console, the log) is the
	// hook's State, fed the loop's events, so a durable session's workers
	// show what this process would (docs/durable.md, "stateful hooks").
	state := eventState{funcState: funcState{
		save: func() (json.RawMessage, error) { return json.Marshal(panelsrc.Save(git, console, log)) },
		load: func(b json.RawMessage) error {
			var s panelsrc.PanelState
			if err := json.Unmarshal(b, &s); err != nil {
				return fmt.Errorf("panel sources: load the panels' state: %w", err)
			}
			panelsrc.Load(s, git, console, log)
			return nil
		}},
		observe: func(e event.Event) { log.Observe(e); console.Observe(e) }}
	cfg.Hooks = append(cfg.Hooks, agent.Hook{Name: "panel sources", Stage: agent.StageComposeRequest, Phase: agent.PhasePre, Kind: agent.HookTransform, State: state,
		Func: func(ctx context.Context, p *agent.Payload) (agent.Verdict, error) {
			at := now()
			if p.Context.Now != 0 { // the request's clock: the same wherever the hook runs
				at = time.UnixMilli(p.Context.Now)
			}
			p.Context.Results = []prompt.Result{git.Result(ctx, at), console.Result()}
			lists, err := tool.LoadTodos(env)
			p.Context.Todos = nil
			for _, t := range lists {
				pt := prompt.Todo{ID: t.ID, Description: t.Description, Changed: t.Modified.UnixMilli()}
				for _, task := range t.Tasks {
					pt.Tasks = append(pt.Tasks, prompt.TodoTask{Task: task.Task, Done: task.Completed})
				}
				p.Context.Todos = append(p.Context.Todos, pt)
			}
			p.Context.Logs = log.Snapshot()
			if err != nil {
				p.Context.Logs = append(p.Context.Logs, prompt.LogEntry{At: p.Context.Now, Text: "todo lists: " + err.Error()})
			}
			return agent.Verdict{}, nil
		}})
}
