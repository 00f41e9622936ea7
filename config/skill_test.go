package config

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSkillHint(t *testing.T) {
	s := Skill{Name: "frontend-design", Description: "Best practices for React component architecture",
		Path: ".kiro/skills/frontend-design/SKILL.md"}
	want := "frontend-design: Best practices for React component architecture (file: .kiro/skills/frontend-design/SKILL.md)"
	if got := SkillHint(s); got != want {
		t.Errorf("SkillHint = %q, want %q (docs/kiro.md, rule 14)", got, want)
	}
}

func TestLoadSkill(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{
		"ok/SKILL.md":       "\ufeff---\r\nname: ok\r\ndescription: |-\r\n  two\r\n  lines\r\nlicense: MIT\r\n---\r\nbody\r\n",
		"noname/SKILL.md":   "---\ndescription: d\n---\n",
		"nofm/SKILL.md":     "# just markdown",
		"unclosed/SKILL.md": "---\nname: x\n",
		"badyaml/SKILL.md":  "---\nname: [unclosed\n---\n",
		"empty/SKILL.md":    "---\n---\nbody",
	})
	s, err := LoadSkill(filepath.Join(dir, "ok/SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "ok" || s.Description != "two\nlines" || s.Meta["license"] != "MIT" || s.Body != "body\n" || !s.FrontMatter {
		t.Errorf("skill %+v", s)
	}
	if s, err := LoadSkill(filepath.Join(dir, "noname/SKILL.md")); err != nil || s.Name != "noname" || s.Description != "d" {
		t.Errorf("name fallback: %+v %v", s, err)
	}
	if s, err := LoadSkill(filepath.Join(dir, "empty/SKILL.md")); err != nil || s.Name != "empty" || s.Body != "body" || !s.FrontMatter {
		t.Errorf("empty front matter: %+v %v", s, err)
	}
	// No front matter at all: kept (as kiro-cli keeps it), named after its
	// folder, no description, the whole file as body.
	if s, err := LoadSkill(filepath.Join(dir, "nofm/SKILL.md")); err != nil || s.FrontMatter || s.Name != "nofm" ||
		s.Description != "" || s.Body != "# just markdown" || len(s.Meta) != 0 {
		t.Errorf("no front matter: %+v %v", s, err)
	}
	for _, bad := range []string{"unclosed", "badyaml", "absent"} {
		p := filepath.Join(dir, bad, "SKILL.md")
		if _, err := LoadSkill(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: want an error naming the file, got %v", bad, err)
		}
	}
}

func TestSteering(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{
		"plain.md":   "# plain\n",
		"always.md":  "---\ninclusion: always\n---\n# always\n",
		"one.md":     "---\ninclusion: fileMatch\nfileMatchPattern: \"components/**/*.tsx\"\n---\n# one\n",
		"comma.md":   "---\ninclusion: fileMatch\nfileMatchPattern: \"*.ts, *.tsx\"\n---\n",
		"list.md":    "---\ninclusion: fileMatch\nfileMatchPattern:\n  - \"docs/**\"\n  - \"README.md\"\n---\n",
		"manual.md":  "---\ninclusion: manual\n---\n# manual\n",
		"auto.md":    "---\ninclusion: auto\nname: x\n---\n",
		"nopat.md":   "---\ninclusion: fileMatch\n---\n",
		"badyaml.md": "---\ninclusion: [\n---\n",
	})
	load := func(name string) *Steering {
		t.Helper()
		s, err := LoadSteering(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return s
	}
	if s := load("plain.md"); !s.Always() || s.Name != "plain" || s.Body != "# plain\n" || !s.Matches("x") {
		t.Errorf("plain %+v", s)
	}
	if s := load("always.md"); !s.Always() || s.Body != "# always\n" {
		t.Errorf("always %+v", s)
	}
	cases := []struct {
		file  string
		pats  []string
		yes   []string
		no    []string
		incl  string
		never bool
	}{
		{"one.md", []string{"components/**/*.tsx"}, []string{"components/a/b.tsx", "./components/x.tsx"}, []string{"src/x.tsx"}, InclusionFileMatch, false},
		{"comma.md", []string{"*.ts", "*.tsx"}, []string{"a.ts", "src/deep/b.tsx"}, []string{"a.js"}, InclusionFileMatch, false},
		{"list.md", []string{"docs/**", "README.md"}, []string{"docs/a/b.md", "README.md"}, []string{"src/README.txt"}, InclusionFileMatch, false},
		{"manual.md", nil, nil, []string{"anything"}, InclusionManual, true},
		{"auto.md", nil, nil, []string{"anything"}, "auto", true},
	}
	for _, c := range cases {
		s := load(c.file)
		if s.Inclusion != c.incl || !reflect.DeepEqual(s.FileMatchPatterns, c.pats) || s.Always() {
			t.Errorf("%s: %+v", c.file, s)
		}
		for _, p := range c.yes {
			if !s.Matches(p) {
				t.Errorf("%s should match %q", c.file, p)
			}
		}
		for _, p := range c.no {
			if s.Matches(p) {
				t.Errorf("%s should not match %q", c.file, p)
			}
		}
	}
	for _, bad := range []string{"nopat.md", "badyaml.md", "absent.md"} {
		if _, err := LoadSteering(filepath.Join(dir, bad)); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: want an error naming the file, got %v", bad, err)
		}
	}
}

func TestRoundTripUnknownFields(t *testing.T) {
	body := `{"name":"rt","future":{"x":[1,2]},"prompt":"file://p.md",
	  "hooks":{"preToolUse":[{"command":"c","matcher":"fs_*","timeout_ms":5,"newHookField":true}],"laterEvent":[{"command":"z"}]},
	  "mcpServers":{"s":{"command":"c","env":{"A":"b"},"oauth":{"redirectUri":"r","pkce":true},"newServerField":"v"}},
	  "resources":["file://a.md",{"type":"knowledgeBase","source":"file://./d","autoUpdate":true}],
	  "toolsSettings":{"shell":{"allowedCommands":["ls"],"unknownSetting":1}},
	  "includeMcpJson":false,"keyboardShortcut":"ctrl+r","welcomeMessage":"w"}`
	var a Agent
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatal(err)
	}
	if a.Prompt != "file://p.md" || a.IncludeMcpJson == nil || *a.IncludeMcpJson || a.MCPIncluded() {
		t.Errorf("decoded %+v", a)
	}
	out, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	_ = json.Unmarshal([]byte(body), &want)
	_ = json.Unmarshal(out, &got)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("round trip\nwant %v\n got %s", want, out)
	}
	if a.Hooks[HookPreToolUse][0].Timeout().Milliseconds() != 5 || a.Hooks["laterEvent"][0].Command != "z" {
		t.Errorf("hooks %+v", a.Hooks)
	}
	if (Hook{}).Timeout() != DefaultHookTimeout || (Hook{}).CacheTTL() != 0 {
		t.Error("hook defaults")
	}
	ttl := int64(3)
	if (Hook{CacheTTLSeconds: &ttl}).CacheTTL().Seconds() != 3 {
		t.Error("cache ttl")
	}
	if s := (MCPServer{URL: "https://x"}); s.Transport() != "http" || s.Timeout() != DefaultMCPTimeout {
		t.Error("url-only server is http")
	}
	var v2 MCPServer
	if err := json.Unmarshal([]byte(`{"command":"git-mcp","transport":"streamable-http"}`), &v2); err != nil || v2.Transport() != "streamable-http" {
		t.Errorf("draft v2 transport: %q %v", v2.Transport(), err)
	}
	if (MCPServer{Command: "c"}).Transport() != "stdio" {
		t.Error("command server is stdio")
	}
}

func TestLoadMCPConfig(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{
		"ok.json":     `{"mcpServers":{"b":{"command":"x","autoApprove":["t"],"disabledTools":["u"]},"a":{"url":"https://a","headers":{"H":"v"}}},"extra":1}`,
		"empty.json":  `{}`,
		"bad.json":    `{"mcpServers":{"a":"x"}}`,
		"syntax.json": "{\n\"mcpServers\": {,}\n}",
	})
	c, err := LoadMCPConfig(filepath.Join(dir, "ok.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Names(), []string{"a", "b"}) || c.Servers["b"].AutoApprove[0] != "t" || c.Servers["a"].Transport() != "http" {
		t.Errorf("config %+v", c)
	}
	if out, _ := json.Marshal(c); !strings.Contains(string(out), `"extra":1`) {
		t.Errorf("extra lost: %s", out)
	}
	if c, err := LoadMCPConfig(filepath.Join(dir, "empty.json")); err != nil || len(c.Servers) != 0 {
		t.Errorf("empty: %v", err)
	}
	for _, bad := range []string{"bad.json", "syntax.json", "absent.json"} {
		if _, err := LoadMCPConfig(filepath.Join(dir, bad)); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: want an error naming the file, got %v", bad, err)
		}
	}
}
