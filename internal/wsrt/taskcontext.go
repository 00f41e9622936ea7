package wsrt

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/tool"
)

// loopHooks returns the hooks of one new loop: the agent's (hooks.Runner),
// with the kiro layout a task-context hook of its own (taskContextHook),
// then Options.Hooks. Only the kiro layout gets the task context: it is
// kiro's layer 3, and the other layouts place prompt.Context.Task in their
// own designs' ways (cachefit in its system text, where a list that
// changes would invalidate the whole cached prefix).
func (w *Workspace) loopHooks() []agent.Hook {
	hs := slices.Clip(w.hooks)
	if w.opts.Layout == "kiro" {
		hs = append(hs, taskContextHook())
	}
	return append(hs, w.opts.Hooks...)
}

// taskContextHook returns a compose_request pre transform that fills
// prompt.Context.Task (kiro layer 3, "Task context: Active task/spec state"
// in the kiro-cli turn anatomy) with the loop's active todo_list lists
// (tool.TaskContext). The lists are read from the request's history and
// remembered, so a list whose messages compaction has detached stays listed
// with its last known state. Each loop needs its own hook (it keeps the
// loop's lists); it is safe for concurrent use. Its State is the lists
// known so far, so a durable session's worker answers as the loop's own
// process would (docs/durable.md, "stateful hooks").
func taskContextHook() agent.Hook {
	var mu sync.Mutex
	var known []tool.Todo
	state := funcState{
		save: func() (json.RawMessage, error) {
			mu.Lock()
			defer mu.Unlock()
			return json.Marshal(known)
		},
		load: func(b json.RawMessage) error {
			var k []tool.Todo
			if err := json.Unmarshal(b, &k); err != nil {
				return fmt.Errorf("task context: load the known todo lists: %w", err)
			}
			mu.Lock()
			known = k
			mu.Unlock()
			return nil
		},
	}
	return agent.Hook{State: state, Name: "task context", Stage: agent.StageComposeRequest, Phase: agent.PhasePre, Kind: agent.HookTransform,
		Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, t := range tool.TodosIn(p.Context.History) {
				i := 0
				for i < len(known) && known[i].ID != t.ID {
					i++
				}
				if i == len(known) {
					known = append(known, t)
				} else {
					known[i] = t
				}
			}
			if task := tool.TaskContext(known); task != "" {
				if p.Context.Task != "" {
					task = p.Context.Task + "\n\n" + task
				}
				p.Context.Task = task
			}
			return agent.Verdict{}, nil
		}}
}

// fileRefreshHook adds to cfg a compose_request transform that sends the
// agent's context files as they are on disk now (agentfile.Refresher). An
// unreadable file is a warning (Options.Warn); the request goes on with
// its last content.
func (w *Workspace) fileRefreshHook(cfg *agent.Config) {
	fr := w.agent.Refresher()
	if fr == nil {
		return
	}
	cfg.Hooks = append(cfg.Hooks, agent.Hook{Name: "context files", State: fr, Stage: agent.StageComposeRequest, Phase: agent.PhasePre, Kind: agent.HookTransform,
		Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
			files, err := fr.Refresh(p.Context.Files)
			p.Context.Files = files
			if err != nil {
				w.opts.Warn(err.Error())
			}
			return agent.Verdict{}, nil
		}})
}
