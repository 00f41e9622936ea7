package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// DefaultSkillResources are the skill locations kiro scans besides the
// agent's own resources (docs/kiro.md, "context message", rule 14; kiro-cli
// paths.rs:60-61): project, then user.
var DefaultSkillResources = []string{"skill://.kiro/skills/*/SKILL.md", "skill://~/.kiro/skills/*/SKILL.md"}

// ResourceFile is a file:// resource, read in full (context layer 5).
type ResourceFile struct {
	// URI is the resource entry that matched, e.g. "file://docs/**/*.md".
	URI string
	// Path is the file's path relative to the project root when inside it,
	// else absolute (slash-separated on every OS for stable output).
	Path string
	// AbsPath is the file's absolute path.
	AbsPath string
	// Content is the whole file.
	Content string
}

// NamedMCPServer is one MCP server of a resolved agent.
type NamedMCPServer struct {
	// Name is the server name: tools are "@Name/tool".
	Name string
	// Server is its configuration.
	Server MCPServer
	// Source is where it came from: the agent file or an mcp.json path.
	Source string
}

// Resolved is what a layout places in requests for an agent, in
// deterministic order.
type Resolved struct {
	// Agent is the agent resolved.
	Agent *Agent
	// ProjectRoot is the absolute directory relative paths resolved against.
	ProjectRoot string
	// Files are the file:// resources in resource order; a glob's matches
	// are sorted; a file matched twice appears once (first place).
	Files []ResourceFile
	// Skills are the skill:// resources, then DefaultSkillResources, in the
	// same order and de-duplicated by file.
	Skills []Skill
	// Steering are the always-included steering files: the project's
	// .kiro/steering/*.md, then the user's ~/.kiro/steering/*.md whose name
	// the project does not use (kiro: Project > Global), sorted by name
	// within each; files already in Files are left out.
	Steering []*Steering
	// ConditionalSteering are the fileMatch and manual steering files, same
	// order; the caller includes them when Matches or "#name" says so.
	ConditionalSteering []*Steering
	// KnowledgeBases are the knowledge-base resource objects, unchanged.
	KnowledgeBases []Resource
	// Knowledge are the knowledgeBase resources read and resolved, in
	// resource order (objects that are not valid knowledge bases are
	// Warnings instead).
	Knowledge []KnowledgeBase
	// MCPServers are the agent's servers plus, when MCPIncluded, those of
	// .kiro/settings/mcp.json, .amazonq/mcp.json, ~/.kiro/settings/mcp.json
	// and ~/.aws/amazonq/mcp.json; the first definition of a name wins
	// (kiro: Agent > Project > Global). Sorted by name; disabled servers are
	// included with Disabled set.
	MCPServers []NamedMCPServer
	// Warnings are what resolution found missing or broken: resources and
	// skills (repeating LoadAgent's when the root is the same), steering.
	Warnings []Warning
}

// SkillHints returns SkillHint of every skill, in order.
func (r *Resolved) SkillHints() []string {
	out := make([]string, len(r.Skills))
	for i, s := range r.Skills {
		out[i] = SkillHint(s)
	}
	return out
}

// ResolveOptions tune ResolveWith.
type ResolveOptions struct {
	// Home replaces the user's home directory ("~", global steering, skills
	// and mcp.json); empty means os.UserHomeDir.
	Home string
	// NoDefaultSkills leaves out DefaultSkillResources.
	NoDefaultSkills bool
	// ReadFile reads every file whose content resolution keeps: file://
	// resources, skills and steering files (nil = os.ReadFile). The
	// runtime passes a reader that applies the workspace sandbox
	// (tool.ReadFileIn; docs/security.md, "Files read into context"); a
	// file it refuses is a Warning naming the file and the reason.
	ReadFile func(path string) ([]byte, error)
}

// Resolve is ResolveWith with default options.
func Resolve(agent *Agent, projectRoot string) (*Resolved, error) {
	return ResolveWith(agent, projectRoot, ResolveOptions{})
}

// ResolveWith resolves an agent's resources, skills, steering and MCP servers
// against projectRoot (empty: the agent's ProjectRoot). Relative file:// and
// skill:// paths resolve against the project root, "~" against the home
// directory; globs use doublestar ("**"). Missing files are Warnings, not
// errors; an unreadable mcp.json that exists, or a nil agent, is an error.
func ResolveWith(agent *Agent, projectRoot string, opts ResolveOptions) (*Resolved, error) {
	if agent == nil {
		return nil, fmt.Errorf("resolve: nil agent")
	}
	if projectRoot == "" {
		projectRoot = agent.ProjectRoot
	}
	root, err := filepath.Abs(projectRoot)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", projectRoot, err)
	}
	home := opts.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	read := opts.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	c := collector{root: root, home: home, agentFile: agent.Path, defaultSkills: !opts.NoDefaultSkills, read: read}
	if root == agent.ProjectRoot {
		c.configDir = agent.ConfigDir
	}
	c.collect(agent, true)
	r := &Resolved{Agent: agent, ProjectRoot: root, Files: c.files, Skills: c.skills, KnowledgeBases: c.kbs, Knowledge: c.knowledge, Warnings: c.warnings}
	r.resolveSteering(home, read)
	if err := r.resolveMCP(home); err != nil {
		return nil, err
	}
	return r, nil
}

// collector gathers file:// and skill:// resources.
type collector struct {
	root, home, agentFile string
	configDir             string // Agent.ConfigDir: ".kiro/" paths resolve against it
	defaultSkills         bool
	read                  func(string) ([]byte, error)
	files                 []ResourceFile
	skills                []Skill
	kbs                   []Resource
	knowledge             []KnowledgeBase
	warnings              []Warning
	seenFile, seenSkill   map[string]bool
}

func (c *collector) warn(file, field, format string, args ...any) {
	c.warnings = append(c.warnings, Warning{File: file, Field: field, Message: fmt.Sprintf(format, args...)})
}

// collect walks the agent's resources; read says whether to read file
// contents (Resolve) or only check existence (LoadAgent).
func (c *collector) collect(a *Agent, read bool) {
	if c.read == nil {
		c.read = os.ReadFile
	}
	c.seenFile, c.seenSkill = map[string]bool{}, map[string]bool{}
	for i, r := range a.Resources {
		field := fmt.Sprintf("/resources/%d", i)
		switch r.Scheme() {
		case "file":
			for _, p := range c.glob(r.Location(), field, "resource file") {
				c.addFile(r.URI, p, field, read)
			}
		case "skill":
			for _, p := range c.glob(r.Location(), field, "skill file") {
				c.addSkill(p, field)
			}
		default:
			if r.Object != nil {
				c.kbs = append(c.kbs, r)
				if r.Scheme() != "knowledgeBase" {
					c.warn(c.agentFile, field, "unsupported resource object of type %q (want \"knowledgeBase\"); ignored", r.Scheme())
				} else if kb, err := c.knowledgeBase(r); err != nil {
					c.warn(c.agentFile, field, "%v; ignored", err)
				} else {
					c.knowledge = append(c.knowledge, kb)
				}
				continue
			}
			c.warn(c.agentFile, field, "unsupported resource %q (want file:// or skill://); ignored", r.URI)
		}
	}
	if c.defaultSkills {
		for _, d := range DefaultSkillResources {
			for _, p := range c.glob(strings.TrimPrefix(d, "skill://"), "", "") {
				c.addSkill(p, "")
			}
		}
	}
}

// glob expands a resource location to absolute, sorted file paths. Without
// any match it warns (unless kind, the thing looked for, is "") and returns nil.
func (c *collector) glob(loc, field, kind string) []string {
	report := kind != ""
	p := expandHome(inConfigDir(loc, c.configDir), c.home)
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.root, p)
	}
	p = filepath.Clean(p)
	if !strings.ContainsAny(loc, "*?[{") {
		st, err := os.Stat(p)
		switch {
		case err != nil:
			if report {
				c.warn(p, field, "%s not found; skipped", kind)
			}
			return nil
		case st.IsDir():
			if report {
				c.warn(p, field, "%s is a directory; skipped", kind)
			}
			return nil
		}
		return []string{p}
	}
	matches, err := doublestar.FilepathGlob(p, doublestar.WithFilesOnly())
	if err != nil {
		if report {
			c.warn(c.agentFile, field, "bad glob %q: %v; skipped", loc, err)
		}
		return nil
	}
	if len(matches) == 0 {
		if report {
			c.warn(p, field, "%s pattern matches no file; skipped", kind)
		}
		return nil
	}
	sort.Strings(matches)
	return matches
}

func (c *collector) display(abs string) string {
	if rel, err := filepath.Rel(c.root, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(abs)
}

func (c *collector) addFile(uri, abs, field string, read bool) {
	if c.seenFile[abs] {
		return
	}
	c.seenFile[abs] = true
	f := ResourceFile{URI: uri, Path: c.display(abs), AbsPath: abs}
	if read {
		b, err := c.read(abs)
		if err != nil {
			c.warn(abs, field, "resource not readable (%v); skipped", unwrapPathError(err))
			return
		}
		f.Content = string(b)
	}
	c.files = append(c.files, f)
}

func (c *collector) addSkill(abs, field string) {
	if c.seenSkill[abs] {
		return
	}
	c.seenSkill[abs] = true
	s, err := loadSkill(abs, c.read)
	if err != nil {
		c.warn(abs, field, "skill skipped: %v", err)
		return
	}
	switch {
	case !s.FrontMatter:
		c.warn(abs, field, "SKILL.md has no YAML front matter, so no name or description (the Agent Skills spec "+
			"requires both between \"---\" lines); listed as %q, its folder name, with an empty description", s.Name)
	case s.Description == "":
		c.warn(abs, field, "skill %q has no description; its hint will be empty", s.Name)
	}
	s.Path = c.display(abs)
	c.skills = append(c.skills, *s)
}

// resolveSteering loads .kiro/steering/*.md of the project and the user
// with read.
func (r *Resolved) resolveSteering(home string, read func(string) ([]byte, error)) {
	inFiles := map[string]bool{}
	for _, f := range r.Files {
		inFiles[f.AbsPath] = true
	}
	seen := map[string]bool{}
	dirs := []string{filepath.Join(r.ProjectRoot, ".kiro", "steering")}
	if home != "" {
		if g := filepath.Join(home, ".kiro", "steering"); g != dirs[0] {
			dirs = append(dirs, g)
		}
	}
	for _, dir := range dirs {
		matches, _ := filepath.Glob(filepath.Join(dir, "*.md"))
		sort.Strings(matches)
		for _, m := range matches {
			name := strings.TrimSuffix(filepath.Base(m), ".md")
			if seen[name] {
				continue
			}
			seen[name] = true
			if inFiles[m] {
				continue
			}
			s, err := LoadSteeringWith(m, read)
			if err != nil {
				r.Warnings = append(r.Warnings, Warning{File: m, Message: fmt.Sprintf("steering file skipped: %v", err)})
				continue
			}
			if s.Always() {
				r.Steering = append(r.Steering, s)
			} else {
				r.ConditionalSteering = append(r.ConditionalSteering, s)
			}
		}
	}
}

// resolveMCP merges the agent's MCP servers with the mcp.json files.
func (r *Resolved) resolveMCP(home string) error {
	byName := map[string]NamedMCPServer{}
	for name, s := range r.Agent.MCPServers {
		byName[name] = NamedMCPServer{Name: name, Server: s, Source: r.Agent.Path}
	}
	if r.Agent.MCPIncluded() {
		files := []string{
			filepath.Join(r.ProjectRoot, ".kiro", "settings", "mcp.json"),
			filepath.Join(r.ProjectRoot, ".amazonq", "mcp.json"),
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".kiro", "settings", "mcp.json"),
				filepath.Join(home, ".aws", "amazonq", "mcp.json"))
		}
		for _, f := range files {
			if _, err := os.Stat(f); err != nil {
				continue
			}
			cfg, err := LoadMCPConfig(f)
			if err != nil {
				return err
			}
			for _, name := range cfg.Names() {
				if _, ok := byName[name]; !ok {
					byName[name] = NamedMCPServer{Name: name, Server: cfg.Servers[name], Source: cfg.Path}
					r.Warnings = append(r.Warnings, cfg.CheckServer(name, r.ProjectRoot, home)...)
				}
			}
		}
	}
	for _, name := range sortedKeys(byName) {
		r.MCPServers = append(r.MCPServers, byName[name])
	}
	return nil
}
