package agentfile

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/tool"
)

// MaxContextFileBytes is the largest file strata reads into a model's
// context without a tool call (AGENTS.md, steering, resources, skills,
// prompt files, the system reminder), in bytes: a larger one is left out
// with a warning, before any byte is read.
const MaxContextFileBytes = 4 << 20

// globalConfigDirs are the user's own kiro / Amazon Q folders, relative to
// the home directory, whose files (global steering, skills, prompts)
// strata reads besides the workspace's: each is a root of its own, so a
// symlink in it that leads out of it is refused too.
var globalConfigDirs = []string{".kiro", filepath.Join(".aws", "amazonq")}

// ContextReader returns the reader of every file strata puts in the
// context for the agent cfg (nil: the default agent, or before its file is
// parsed) in the workspace dir (docs/security.md, "Files read into
// context"): tool.ReadFileIn with the agent's fs_read policy rooted at dir
// — inside the workspace or an fs_read allowedPaths entry after symlinks,
// not denied, not hard-linked, a regular file of at most
// MaxContextFileBytes — or, for a file in one of the user's
// globalConfigDirs, the same rule rooted at that folder.
func ContextReader(dir string, cfg *config.Agent) func(string) ([]byte, error) {
	env := &tool.Env{Workdir: dir}
	if cfg != nil {
		r := cfg.ToolSettings("fs_read")
		env.ReadPaths = tool.PathPolicy{AllowedPaths: r.AllowedPaths, DeniedPaths: r.DeniedPaths}
	}
	home, _ := os.UserHomeDir()
	return func(p string) ([]byte, error) {
		b, err := tool.ReadFileIn(env, p, MaxContextFileBytes)
		if err == nil || !errors.Is(err, tool.ErrSandbox) || home == "" {
			return b, err
		}
		for _, g := range globalConfigDirs {
			root := filepath.Join(home, g)
			if rel, rerr := filepath.Rel(root, p); rerr == nil && filepath.IsLocal(rel) {
				return tool.ReadFileIn(&tool.Env{Workdir: root, ReadPaths: tool.PathPolicy{DeniedPaths: env.ReadPaths.DeniedPaths}}, p, MaxContextFileBytes)
			}
		}
		return nil, err
	}
}
