package agentfile

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/internal/toolcheck"
	"github.com/strata-agent/strata/prompt"
)

// DefaultInstructions are the system instructions of strata's default agent
// (no agent file): what to use the built-in tools for, in a few lines.
//
//go:embed default_system.md
var DefaultInstructions string

// Where kiro and Amazon Q look for agent files, relative to a workspace root
// and to the home directory (kiro docs: .kiro/agents and ~/.kiro/agents;
// Amazon Q: .amazonq/cli-agents and ~/.aws/amazonq/cli-agents). Workspace
// agents shadow global ones of the same name.
var (
	workspaceAgentDirs = []string{".kiro/agents", ".amazonq/cli-agents"}
	globalAgentDirs    = []string{".kiro/agents", ".aws/amazonq/cli-agents"}
)

// Entry is one agent configuration file a workspace can run.
type Entry struct {
	Name  string // the file name without ".json" (kiro selects agents by it)
	Path  string // absolute path
	Scope string // "workspace" or "global"
}

// Find lists the agent files kiro and Amazon Q would load for the
// workspace at dir: its .kiro/agents and .amazonq/cli-agents, then the
// user's ~/.kiro/agents and ~/.aws/amazonq/cli-agents, each sorted by path.
// Unreadable folders are skipped.
func Find(dir string) []Entry {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	var out []Entry
	scan := func(base string, dirs []string, scope string) {
		for _, d := range dirs {
			files, _ := filepath.Glob(filepath.Join(base, d, "*.json"))
			sort.Strings(files)
			for _, f := range files {
				out = append(out, Entry{Name: strings.TrimSuffix(filepath.Base(f), ".json"), Path: f, Scope: scope})
			}
		}
	}
	scan(root, workspaceAgentDirs, "workspace")
	if home, err := os.UserHomeDir(); err == nil && home != root {
		scan(home, globalAgentDirs, "global")
	}
	return out
}

// Resolve returns the agent file ref names for the workspace at dir:
// ref is a path when it names an existing file, contains a path separator or
// ends in ".json" (relative paths resolve against dir), else an agent name
// looked up as kiro does (Find order: workspace before global). A name
// that matches no file returns an error listing the names that exist.
func Resolve(dir, ref string) (string, error) {
	if ref == "" {
		return "", errors.New("agent: empty agent name or path")
	}
	if strings.ContainsRune(ref, os.PathSeparator) || strings.HasSuffix(ref, ".json") || exists(filepath.Join(dir, ref)) {
		if !filepath.IsAbs(ref) {
			ref = filepath.Join(dir, ref)
		}
		return ref, nil
	}
	found := Find(dir)
	var names []string
	for _, a := range found {
		if a.Name == ref {
			return a.Path, nil
		}
		names = append(names, a.Name)
	}
	if len(names) == 0 {
		hint := MisplacedHint(dir)
		if hint != "" {
			hint = "; " + hint
		}
		return "", fmt.Errorf("agent %q: no agent files in %s (.kiro/agents, .amazonq/cli-agents) or the global agent folders; pass a path to an agent JSON file%s", ref, dir, hint)
	}
	return "", fmt.Errorf("agent %q not found (agents: %s)", ref, strings.Join(names, ", "))
}

// MisplacedHint explains why Find(dir) finds no workspace agent
// when dir holds agent files directly in agents/ — dir is a .kiro folder
// itself, or a project whose repository is one (its README says to clone it
// as <project>/.kiro) — and says how to run them. kiro-cli reads only
// <workspace>/.kiro/agents (then .amazonq/cli-agents) and the global folders
// (kiro docs, "Agent file locations"; kiro-cli agent loading,
// resolve_workspace_agents_dir), and strata finds what kiro finds, so such a
// folder must be the .kiro of a workspace. It returns "" when dir/agents
// holds no *.json file or dir/.kiro/agents exists.
func MisplacedHint(dir string) string {
	root, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	files, _ := filepath.Glob(filepath.Join(root, "agents", "*.json"))
	if st, err := os.Stat(filepath.Join(root, ".kiro", "agents")); len(files) == 0 || err == nil && st.IsDir() {
		return ""
	}
	if filepath.Base(root) == ".kiro" {
		return fmt.Sprintf("%s is a .kiro folder: use its workspace %s as the directory", root, filepath.Dir(root))
	}
	return fmt.Sprintf("%s holds %d agent file(s) in agents/ but kiro reads only <workspace>/.kiro/agents: "+
		"install it as the .kiro folder of a workspace (clone or copy it as <workspace>/.kiro: a symlinked .kiro leads out of the workspace, and strata reads context files only inside it) and use that workspace", root, len(files))
}

func exists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// File is a loaded agent: a kiro / Amazon Q agent file (or strata's default
// agent, Default) with its configuration as written, the
// resolution against the project (resources, steering, skills, MCP servers,
// hooks) and the prompt.Context template built from it.
type File struct {
	Config   *config.Agent
	Resolved *config.Resolved
	// Context is the template every turn's prompt.Context starts from: the
	// agent prompt as system instructions, file:// resources then
	// always-included steering files as context files, skill:// resources as
	// skill metadata (kiro loads steering as resources; docs/kiro.md).
	Context prompt.Context
	// Warnings are the loading and resolution warnings (missing resources,
	// hook scripts, MCP commands…), toolcheck.Warnings (tool names strata
	// cannot offer) and toolcheck.SkillsWithoutFSRead, each once.
	Warnings []config.Warning

	read func(string) ([]byte, error) // the sandboxed reader of its context files
}

// Refresher watches the File's context files and reads a changed one
// again with the reader that loaded it (nil when there are none).
func (f *File) Refresher() *Refresher {
	if f == nil || f.read == nil {
		return nil
	}
	return NewRefresher(f.Resolved, f.read)
}

// Load reads the agent file at path and resolves it against
// projectRoot ("" = the project the agent file belongs to). Errors name the
// file and field (see config.LoadAgent).
//
// Every file read into the context (the prompt file, file:// resources,
// skills, steering) passes the workspace sandbox with the agent's fs_read
// policy (ContextReader); a refused file is a warning and is left out.
func Load(path, projectRoot string) (*File, error) {
	var err error
	if projectRoot != "" {
		if projectRoot, err = filepath.Abs(projectRoot); err != nil {
			return nil, err
		}
	}
	root := projectRoot
	if root == "" {
		root = agentProjectRoot(path)
	}
	a, err := config.LoadAgentWith(path, config.LoadOptions{ReadFile: ContextReader(root, nil)})
	if err != nil {
		return nil, err
	}
	if projectRoot == "" {
		root = a.ProjectRoot
	}
	read := ContextReader(root, a)
	r, err := config.ResolveWith(a, projectRoot, config.ResolveOptions{ReadFile: read})
	if err != nil {
		return nil, err
	}
	l := &File{Config: a, Resolved: r, Context: contextOf(r), read: read}
	servers := make([]string, len(r.MCPServers))
	for i, s := range r.MCPServers {
		servers[i] = s.Name
	}
	seen := map[[2]string]bool{} // loading and resolving may report the same missing resource
	warns := append(append(append([]config.Warning(nil), a.Warnings...), r.Warnings...), toolcheck.Warnings(a, servers, toolcheck.Implemented())...)
	for _, w := range append(warns, toolcheck.SkillsWithoutFSRead(a, len(r.Skills))...) {
		if k := [2]string{w.Field, w.Message}; !seen[k] {
			seen[k] = true
			l.Warnings = append(l.Warnings, w)
		}
	}
	return l, nil
}

// agentProjectRoot is the project an agent file at path belongs to before
// it is parsed: the folder holding its .kiro or .amazonq, else its own
// folder (config.Agent.ProjectRoot is the same once loaded).
func agentProjectRoot(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Dir(path)
	}
	for d := filepath.Dir(abs); d != filepath.Dir(d); d = filepath.Dir(d) {
		if b := filepath.Base(d); b == ".kiro" || b == ".amazonq" {
			return filepath.Dir(d)
		}
	}
	return filepath.Dir(abs)
}

// contextOf builds the context template of a resolved agent (see
// Agent.Context). Order follows the resolution, which follows the agent file.
func contextOf(r *config.Resolved) prompt.Context {
	c := prompt.Context{System: r.Agent.Prompt}
	for _, f := range agentFiles(r) {
		c.Files = append(c.Files, prompt.File{Path: f.path, Content: f.content, Refreshed: modified(f.abs)})
	}
	for _, s := range r.Skills {
		c.Skills = append(c.Skills, prompt.Skill{Name: s.Name, Description: s.Description, Path: s.Path})
	}
	return c
}

// agentFile is one file of an agent's context: shown as path, read from
// abs; a steering file's content is its body (after the front matter).
type agentFile struct {
	path, abs, content string
	steering           bool
}

// agentFiles are the files of r's context in the order contextOf shows
// them: the file:// resources, then the always-included steering files,
// each file once.
func agentFiles(r *config.Resolved) []agentFile {
	var out []agentFile
	seen := map[string]bool{}
	for _, f := range r.Files {
		if !seen[f.AbsPath] {
			seen[f.AbsPath] = true
			out = append(out, agentFile{path: f.Path, abs: f.AbsPath, content: f.Content})
		}
	}
	for _, s := range r.Steering {
		if s.Always() && !seen[s.AbsPath] {
			seen[s.AbsPath] = true
			out = append(out, agentFile{path: rel(r.ProjectRoot, s.AbsPath), abs: s.AbsPath, content: s.Body, steering: true})
		}
	}
	return out
}

// modified is when the file at path last changed (Unix ms; 0 when it
// cannot be read): the refresh time of its context item (prompt.File).
func modified(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.ModTime().UnixMilli()
}

// rel shows abs relative to root when it is inside it.
func rel(root, abs string) string {
	if root != "" {
		if r, err := filepath.Rel(root, abs); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(r)
		}
	}
	return filepath.ToSlash(abs)
}
