package strata

import (
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/tool"
)

// ToolEnv returns the environment the workspace's built-in tools run in
// for a session of its directory: the path rules of the agent's
// toolsSettings (fs_read's allowedPaths and deniedPaths, fs_write's) and
// execute_bash's command patterns. A UI uses it to read what a tool call
// will change (tool.FSWrite.Preview) or a file the user mentions with the
// same rules the tools apply. The agent a session swaps to has its own
// rules: call it again after a swap.
func (w *Workspace) ToolEnv() *tool.Env { return w.env(w.dir) }

// Mode returns the approval mode sessions of the workspace start in
// (Options.Mode); Session.SetMode changes one session's.
func (w *Workspace) Mode() agent.Mode { return w.opts.Mode }
