// Package config loads agent configuration as kiro and the Amazon Q Developer
// CLI write it, unchanged: agent files (JSON, schema agent-v1.json, embedded),
// Agent Skills (SKILL.md with YAML front matter), kiro steering files and
// Claude-Desktop-style mcp.json files. Resolve turns a loaded agent into the
// ordered material a layout places in requests: resource files, skill hints,
// steering, MCP servers.
//
// Rules come from the Amazon Q Developer CLI docs (agent-format.md, hooks.md,
// built-in-tools.md, agent-file-locations.md; ../shared/data/agents) and the
// kiro CLI documentation; each identifier's comment names its source.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/strata-agent/strata/internal/jsonpos"
)

// Agent is a kiro / Amazon Q agent file (agent-format.md, agent-v1.json, kiro
// configuration reference). Fields strata does not know are kept in Extra and
// written back by MarshalJSON, so decoding and encoding loses nothing.
type Agent struct {
	// Schema is the optional "$schema" URL.
	Schema string `json:"$schema,omitempty"`
	// Name names the agent; LoadAgent derives it from the file name when the
	// file has none (agent-format.md "Name Field").
	Name string `json:"name,omitempty"`
	// Description is for humans choosing an agent; not sent to the model.
	Description string `json:"description,omitempty"`
	// PromptRef is the "prompt" field as written: inline text, "file://PATH"
	// or "@name".
	PromptRef string `json:"prompt,omitempty"`
	// Model is the model ID; empty means the default model.
	Model string `json:"model,omitempty"`
	// MCPServers maps server names to the servers this agent starts.
	MCPServers map[string]MCPServer `json:"mcpServers,omitempty"`
	// Tools lists the tools the model sees: names, "*", "@builtin",
	// "@server", "@server/tool" (agent-format.md "Tools Field").
	Tools []string `json:"tools,omitempty"`
	// ToolAliases maps an original tool name ("@server/tool") to the name
	// the model sees.
	ToolAliases map[string]string `json:"toolAliases,omitempty"`
	// AllowedTools are patterns of tools run without prompting.
	AllowedTools []string `json:"allowedTools,omitempty"`
	// ToolsSettings maps a tool name to its settings object, raw; see
	// Agent.ToolSettings for the typed view.
	ToolsSettings map[string]json.RawMessage `json:"toolsSettings,omitempty"`
	// Resources are the context resources: "file://" (read in full),
	// "skill://" (metadata only) or knowledge-base objects.
	Resources []Resource `json:"resources,omitempty"`
	// Hooks maps hook events to commands.
	Hooks Hooks `json:"hooks,omitempty"`
	// UseLegacyMcpJson includes the mcp.json files' servers (Amazon Q name).
	UseLegacyMcpJson bool `json:"useLegacyMcpJson,omitempty"`
	// IncludeMcpJson includes the mcp.json files' servers (kiro name); nil
	// when absent.
	IncludeMcpJson *bool `json:"includeMcpJson,omitempty"`
	// WelcomeMessage is shown when the user switches to the agent (kiro).
	WelcomeMessage string `json:"welcomeMessage,omitempty"`
	// KeyboardShortcut switches to the agent, e.g. "ctrl+shift+r" (kiro).
	KeyboardShortcut string `json:"keyboardShortcut,omitempty"`
	// Extra holds top-level fields strata does not know, unchanged.
	Extra map[string]json.RawMessage `json:"-"`

	// Prompt is the agent's instructions, resolved by LoadAgent: the inline
	// text, the content of a "file://" prompt, or of the prompt file an
	// "@name" prompt names. Empty when a referenced file is missing (see
	// Warnings).
	Prompt string `json:"-"`
	// PromptSource is where Prompt came from: "inline" or a file path.
	PromptSource string `json:"-"`
	// Path is the absolute path the agent was loaded from.
	Path string `json:"-"`
	// ProjectRoot is what relative resource paths resolve against: the
	// directory holding .kiro/ or .amazonq/ for workspace agents
	// (agent-file-locations.md), else the agent file's directory.
	ProjectRoot string `json:"-"`
	// ConfigDir is set when the agent belongs to a kiro configuration folder
	// loaded in place: a folder not named .kiro that holds agents/ beside
	// steering/, skills/, settings/, prompts/ or hooks/ — a repository whose
	// README installs it as <workspace>/.kiro. ProjectRoot is then that
	// folder too, and relative resource paths written for the installed
	// layout (".kiro/steering/**/*.md") resolve against it, as they would
	// once installed (docs/kiro.md, "Configuration folders loaded in place").
	ConfigDir string `json:"-"`
	// Warnings lists what LoadAgent found missing or ignored, in field order.
	Warnings []Warning `json:"-"`
}

// MCPIncluded reports whether the agent takes servers from the mcp.json files:
// includeMcpJson (kiro) or useLegacyMcpJson (agent-format.md), whichever is set.
func (a *Agent) MCPIncluded() bool {
	if a.IncludeMcpJson != nil {
		return *a.IncludeMcpJson || a.UseLegacyMcpJson
	}
	return a.UseLegacyMcpJson
}

// UnmarshalJSON decodes an agent and keeps unknown fields. Prompt is set to
// the raw prompt; LoadAgent resolves file references.
func (a *Agent) UnmarshalJSON(b []byte) error {
	type plain Agent
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*a = Agent(p)
	a.Extra = extraFields(b, reflect.TypeOf(p))
	a.Prompt, a.PromptSource = a.PromptRef, "inline"
	return nil
}

// MarshalJSON encodes the agent as a file: the prompt as written (PromptRef),
// with unknown fields. Keys come out sorted.
func (a Agent) MarshalJSON() ([]byte, error) {
	type plain Agent
	return withExtra(plain(a), a.Extra)
}

// Resource is one entry of "resources": a URI string ("file://…",
// "skill://…") or an object such as a kiro knowledge base
// {"type":"knowledgeBase","source":"file://…","name":…}.
type Resource struct {
	// URI is the string form; empty for objects.
	URI string
	// Object is the raw object form; nil for strings.
	Object json.RawMessage
}

// Scheme returns "file", "skill", the object's "type" (e.g. "knowledgeBase"),
// or "" when unknown.
func (r Resource) Scheme() string {
	if r.Object != nil {
		var o struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(r.Object, &o)
		return o.Type
	}
	if s, _, ok := strings.Cut(r.URI, "://"); ok {
		return s
	}
	return ""
}

// Location is the URI without its scheme ("file://a/*.md" → "a/*.md"); for an
// object, its "source" without scheme.
func (r Resource) Location() string {
	u := r.URI
	if r.Object != nil {
		var o struct {
			Source string `json:"source"`
		}
		_ = json.Unmarshal(r.Object, &o)
		u = o.Source
	}
	if _, rest, ok := strings.Cut(u, "://"); ok {
		return rest
	}
	return u
}

// UnmarshalJSON accepts a string or an object.
func (r *Resource) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*r = Resource{URI: s}
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("resource: want a string or an object")
	}
	*r = Resource{Object: append(json.RawMessage(nil), b...)}
	return nil
}

// MarshalJSON writes the resource back in its original form.
func (r Resource) MarshalJSON() ([]byte, error) {
	if r.Object != nil {
		return r.Object, nil
	}
	return json.Marshal(r.URI)
}

// LoadAgent reads, validates and resolves the agent file at path.
//
// The file is validated against the embedded agent-v1.json, extended with what
// the docs and real files use (see extendSchema); a mismatch is a
// *SchemaError naming the file, the JSON pointer and the expected type.
// Invalid JSON is an error with line and column. Then:
//   - a missing name is derived from the file name (agent-format.md);
//   - "file://P" prompts are read from P relative to the agent file's
//     directory (agent-format.md "File URI Path Resolution"), "~" expanded;
//   - "@name" prompts are read from .kiro/prompts/name.md of the project,
//     else ~/.kiro/prompts/name.md (kiro prompts: Project > Global); when
//     neither exists the text is kept inline with a warning;
//   - missing prompt files, resources, skills, hook scripts and MCP commands,
//     unknown fields, and ignored values become Warnings, not errors.
func LoadAgent(path string) (*Agent, error) { return LoadAgentWith(path, LoadOptions{}) }

// maxConfigBytes bounds an agent or mcp.json file (bytes).
const maxConfigBytes = 4 << 20

// readConfigFile reads a configuration file that must be a regular file
// (following symlinks) of at most maxConfigBytes: a FIFO, a device or a
// huge file named like an agent file (written by anyone, the model
// included) is an error, not a hang.
func readConfigFile(abs string) ([]byte, error) {
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file (%s)", abs, st.Mode().Type())
	case st.Size() > maxConfigBytes:
		return nil, fmt.Errorf("%s: %d bytes, over the %d-byte limit of a configuration file", abs, st.Size(), maxConfigBytes)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxConfigBytes))
}

// LoadOptions tune LoadAgentWith.
type LoadOptions struct {
	// ReadFile reads the prompt file a "file://" or "@name" prompt names
	// (nil = os.ReadFile); see ResolveOptions.ReadFile. The agent file
	// itself is read with os.ReadFile.
	ReadFile func(path string) ([]byte, error)
}

// LoadAgentWith is LoadAgent with options.
func LoadAgentWith(path string, o LoadOptions) (*Agent, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", path, err)
	}
	raw, err := readConfigFile(abs)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	var inst any
	if err := json.Unmarshal(raw, &inst); err != nil {
		return nil, fmt.Errorf("agent %s: not valid JSON: %w", abs, jsonpos.Wrap(raw, err))
	}
	if err := validateAgentJSON(abs, inst); err != nil {
		return nil, err
	}
	var a Agent
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("agent %s: %w", abs, err)
	}
	a.Path = abs
	a.ProjectRoot, a.ConfigDir = projectRootOf(abs)
	if a.Name == "" {
		a.Name = strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	}
	home, _ := os.UserHomeDir()
	read := o.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	a.resolvePrompt(home, read)
	a.checkFields()
	a.checkResources(home)
	a.checkHooks(home)
	a.checkMCP(home)
	return &a, nil
}

// projectRootOf returns the directory holding the .kiro/ or .amazonq/ folder
// an agent file lives in (workspace agents: .kiro/agents/,
// .amazonq/cli-agents/); for an agent in the agents/ folder of a kiro
// configuration folder loaded in place (isConfigFolder) that folder, also
// returned as configDir; else the file's directory.
func projectRootOf(file string) (root, configDir string) {
	dir := filepath.Dir(file)
	for d := dir; ; {
		switch filepath.Base(d) {
		case ".kiro", ".amazonq":
			return filepath.Dir(d), ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if cfg := filepath.Dir(dir); filepath.Base(dir) == "agents" && isConfigFolder(cfg) {
		return cfg, cfg
	}
	return dir, ""
}

// configFolders are the folders kiro reads from a .kiro folder besides
// agents/ (kiro docs "Configuration scopes": steering, skills, settings,
// prompts; hooks/ holds the scripts agent hooks name).
var configFolders = []string{"steering", "skills", "settings", "prompts", "hooks"}

// isConfigFolder reports whether dir holds one of configFolders: with an
// agents/ folder, the shape of a .kiro folder.
func isConfigFolder(dir string) bool {
	for _, f := range configFolders {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// inConfigDir maps a relative resource location written for the installed
// layout (".kiro/…") to configDir, the folder loaded in place; other
// locations, or configDir "", are returned unchanged.
func inConfigDir(loc, configDir string) string {
	if rest, ok := strings.CutPrefix(filepath.ToSlash(loc), ".kiro/"); ok && configDir != "" {
		return filepath.Join(configDir, rest)
	}
	return loc
}

func (a *Agent) warn(file, field, format string, args ...any) {
	a.Warnings = append(a.Warnings, Warning{File: file, Field: field, Message: fmt.Sprintf(format, args...)})
}

var promptNameRE = regexp.MustCompile(`^@([A-Za-z0-9_.-]+)$`)

// promptPathHint explains a relative file:// prompt that is missing beside
// the agent file but exists relative to the agent's .kiro (or .amazonq)
// folder or to the project root, as when a project written for another base
// (a repository that is itself a .kiro folder) is installed: kiro-cli, like
// strata, resolves it against the agent file's folder only (kiro docs,
// "File URI path resolution"; kiro-cli resolve_global_prompt), so the prompt
// is lost there too. It returns "" when rel is absolute or found nowhere.
func (a *Agent) promptPathHint(rel string) string {
	if rel == "" || filepath.IsAbs(rel) || strings.HasPrefix(rel, "~") {
		return ""
	}
	agentDir := filepath.Dir(a.Path)
	bases := []string{a.ProjectRoot}
	if cfg := filepath.Dir(agentDir); filepath.Dir(cfg) == a.ProjectRoot && cfg != a.ProjectRoot {
		bases = []string{cfg, a.ProjectRoot} // <root>/.kiro, then <root>
	}
	for _, base := range bases {
		cand := filepath.Join(base, rel)
		if st, err := os.Stat(cand); err != nil || st.IsDir() {
			continue
		}
		fix, err := filepath.Rel(agentDir, cand)
		if err != nil {
			fix = cand
		}
		return fmt.Sprintf(" (kiro resolves a relative file:// prompt against the agent file's folder %s; "+
			"the file exists at %s: write \"file://%s\" or an absolute path)", agentDir, cand, filepath.ToSlash(fix))
	}
	return ""
}

func (a *Agent) resolvePrompt(home string, read func(string) ([]byte, error)) {
	a.Prompt, a.PromptSource = a.PromptRef, "inline"
	if rel, ok := strings.CutPrefix(a.PromptRef, "file://"); ok {
		p := expandHome(rel, home)
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(a.Path), p)
		}
		p = filepath.Clean(p)
		b, err := read(p)
		if err != nil {
			a.Prompt = ""
			a.warn(p, "/prompt", "prompt file not readable (%v); the agent has no prompt%s", unwrapPathError(err), a.promptPathHint(rel))
			return
		}
		a.Prompt, a.PromptSource = string(b), p
		return
	}
	if m := promptNameRE.FindStringSubmatch(strings.TrimSpace(a.PromptRef)); m != nil {
		cands := []string{filepath.Join(a.ProjectRoot, ".kiro", "prompts", m[1]+".md")}
		if home != "" {
			cands = append(cands, filepath.Join(home, ".kiro", "prompts", m[1]+".md"))
		}
		for _, c := range cands {
			if b, err := read(c); err == nil {
				a.Prompt, a.PromptSource = string(b), c
				return
			}
		}
		a.warn(a.Path, "/prompt", "prompt %q names no prompt file (looked for %s); kept as inline text",
			a.PromptRef, strings.Join(cands, ", "))
	}
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// expandHome replaces a leading "~" or "~/" with home.
func expandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

// checkFields warns about unknown fields and values the docs say are ignored.
func (a *Agent) checkFields() {
	keys := make([]string, 0, len(a.Extra))
	for k := range a.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a.warn(a.Path, "/"+escapePointer(k), "unknown field, kept unchanged")
	}
	for i, t := range a.AllowedTools {
		if t == "*" {
			a.warn(a.Path, fmt.Sprintf("/allowedTools/%d", i),
				`"*" is not supported in allowedTools (agent-format.md "AllowedTools Field"); ignored: list "@builtin" and "@server" entries instead`)
		}
	}
	names := make([]string, 0, len(a.ToolsSettings))
	for k := range a.ToolsSettings {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		var ts ToolSettings
		if err := json.Unmarshal(a.ToolsSettings[k], &ts); err != nil {
			a.warn(a.Path, "/toolsSettings/"+escapePointer(k), "settings not understood (%v); ignored", err)
		}
	}
}

// ToolSettings returns the typed settings of a tool: the toolsSettings entries
// whose key names the same tool (CanonicalTool, so "shell" and
// "execute_bash" both configure execute_bash), merged in key order. Entries
// that do not decode are skipped (LoadAgent warned about them).
func (a *Agent) ToolSettings(tool string) ToolSettings {
	want := a.CanonicalName(tool)
	keys := make([]string, 0, len(a.ToolsSettings))
	for k := range a.ToolsSettings {
		if a.CanonicalName(k) == want {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out ToolSettings
	for _, k := range keys {
		var ts ToolSettings
		if err := json.Unmarshal(a.ToolsSettings[k], &ts); err != nil {
			continue
		}
		out.merge(ts)
		out.Keys = append(out.Keys, k)
	}
	return out
}
