package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Skill is an Agent Skill: a SKILL.md whose YAML front matter has name and
// description (agentskills.io; ../shared/data/skills). kiro places only the
// metadata in requests, as a hint (see SkillHint); the model reads the file
// when it needs it (docs/kiro.md, "context message", rule 14).
type Skill struct {
	// Name is the front matter's name, or the skill directory's name when
	// the front matter has none.
	Name string
	// Description is the front matter's description, unchanged (it may span
	// lines).
	Description string
	// Path is the path the hint shows: relative to the project root when the
	// file lies inside it (Resolve), else as given / absolute.
	Path string
	// AbsPath is the file's absolute path.
	AbsPath string
	// Meta is the whole front matter (license, allowed-tools, …); empty
	// without front matter.
	Meta map[string]any
	// Body is the Markdown after the front matter (the whole file without
	// front matter).
	Body string
	// FrontMatter reports whether the file starts with YAML front matter.
	// A SKILL.md without it has no name or description of its own (see
	// LoadSkill); Resolve warns about it.
	FrontMatter bool
}

// SkillHintHeader introduces the skill hints in kiro's context message
// (docs/kiro.md, rule 14; kiro-cli consts.rs:41).
const SkillHintHeader = "The following file entries contain: name, filepath, and description. " +
	"You SHOULD decide when to read the full file using the filepath based on its description:"

// SkillHint formats a skill as kiro's format_skill_hint does (docs/kiro.md, rule 14):
// "{name}: {description} (file: {path})".
func SkillHint(s Skill) string {
	return fmt.Sprintf("%s: %s (file: %s)", s.Name, s.Description, s.Path)
}

// LoadSkill reads a SKILL.md. An unreadable file, and front matter that is
// malformed (a first line "---" never closed, invalid YAML), are errors naming
// the file. A missing name falls back to the directory name; a missing
// description is left empty (Resolve warns).
//
// A file without any front matter is not an error: it is returned with
// FrontMatter false, its directory name as Name, no Description and the
// whole file as Body. The Agent Skills specification (agentskills.io,
// "SKILL.md format") requires front matter with name and description, but
// kiro-cli does not reject such a file: its context builder keeps the skill
// (crates/agent/src/agent/mod.rs, collect_resources:
// format_skill_hint(...).unwrap_or(content), which puts the whole file where
// the hint would go) and its skill prompts name it after its folder with no
// description (crates/agent/src/agent/prompts/skills.rs, skill_file_to_prompt).
// strata keeps the skill too, named after its folder, but its hint stays
// metadata only (SkillHint); Resolve reports the missing front matter as a
// Warning naming the file, so one such file never fails the agent.
func LoadSkill(path string) (*Skill, error) { return loadSkill(path, os.ReadFile) }

// loadSkill is LoadSkill reading the file with read.
func loadSkill(path string, read func(string) ([]byte, error)) (*Skill, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("skill %s: %w", path, err)
	}
	raw, err := read(abs)
	if err != nil {
		return nil, fmt.Errorf("skill: %w", err)
	}
	s := &Skill{Path: path, AbsPath: abs, Meta: map[string]any{}}
	fm, body, ok := splitFrontMatter(raw)
	s.Body = body
	switch {
	case ok:
		if s.Meta, err = parseFrontMatter(fm); err != nil {
			return nil, fmt.Errorf("skill %s: front matter: %w", abs, err)
		}
		s.FrontMatter = true
		s.Name = strings.TrimSpace(stringOf(s.Meta["name"]))
		s.Description = strings.TrimSpace(stringOf(s.Meta["description"]))
	case strings.TrimRight(strings.SplitN(body, "\n", 2)[0], " \t") == "---":
		return nil, fmt.Errorf("skill %s: front matter not closed (want a line \"---\" after the name and description)", abs)
	}
	if s.Name == "" {
		s.Name = filepath.Base(filepath.Dir(abs))
	}
	return s, nil
}

// splitFrontMatter splits "---\nYAML\n---\nBODY". ok is false without front
// matter. A UTF-8 BOM and CRLF line ends are accepted.
func splitFrontMatter(raw []byte) (fm []byte, body string, ok bool) {
	raw = bytes.TrimPrefix(raw, []byte("\ufeff"))
	text := strings.ReplaceAll(string(raw), "\r\n", "\n")
	lines := strings.SplitAfter(text, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t\n") != "---" {
		return nil, text, false
	}
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t\n") == "---" {
			return []byte(strings.Join(lines[1:i], "")), strings.Join(lines[i+1:], ""), true
		}
	}
	return nil, text, false
}

// parseFrontMatter decodes YAML front matter into a map; empty is an empty map.
func parseFrontMatter(fm []byte) (meta map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("YAML: %v", r)
		}
	}()
	meta = map[string]any{}
	if len(bytes.TrimSpace(fm)) == 0 {
		return meta, nil
	}
	if err := yaml.Unmarshal(fm, &meta); err != nil {
		return nil, err
	}
	if meta == nil {
		meta = map[string]any{}
	}
	return meta, nil
}

// stringOf renders a scalar front-matter value as text ("" for nil).
func stringOf(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}
