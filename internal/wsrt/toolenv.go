package wsrt

import (
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/tool"
)

// ToolEnv implements strata.Workspace.ToolEnv (documented there).
func (w *Workspace) ToolEnv() *tool.Env { return w.env(w.dir) }

// Mode implements strata.Workspace.Mode (documented there).
func (w *Workspace) Mode() agent.Mode { return w.opts.Mode }
