package strata_test

import (
	"context"
	"errors"
	"github.com/strata-agent/strata/trust"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
)

// Without an agent file, the request carries what kiro's default agent,
// Claude Code and Codex read from a project: AGENTS.md, CLAUDE.md,
// README.md and the always-included steering, not the manual or fileMatch
// steering, nor files elsewhere.
func TestDefaultAgentReadsProjectContext(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"AGENTS.md":                   "AGENTS-MD-MARKER: run make check before committing",
		"CLAUDE.md":                   "CLAUDE-MD-MARKER: prefer table-driven tests",
		"README.md":                   "README-MD-MARKER: the quokka project",
		"sub/AGENTS.md":               "NESTED-AGENTS-MARKER",
		".kiro/steering/style.md":     "---\ninclusion: always\n---\nSTEERING-ALWAYS-MARKER",
		".kiro/steering/deploy.md":    "---\ninclusion: manual\n---\nSTEERING-MANUAL-MARKER",
		".kiro/steering/go-files.md":  "---\ninclusion: fileMatch\nfileMatchPattern: \"*.go\"\n---\nSTEERING-FILEMATCH-MARKER",
		".kiro/steering/plain.md":     "STEERING-NO-FRONT-MATTER-MARKER", // kiro: no front matter = always
		".amazonq/rules/ignored.md":   "AMAZONQ-RULES-MARKER",
		".kiro/settings/mcp.json.bak": "{}",
	})
	for _, layout := range []string{"flat", "cachefit", "kiro"} {
		ws := openWorkspace(t, strata.Options{Dir: dir, ProviderName: "anthropic", Layout: layout})
		r, err := ws.Render(context.Background(), strata.RenderOptions{Prompt: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		body := string(r.Body)
		for _, want := range []string{"AGENTS-MD-MARKER", "CLAUDE-MD-MARKER", "README-MD-MARKER", "STEERING-ALWAYS-MARKER",
			"STEERING-NO-FRONT-MATTER-MARKER", "You are a careful software engineering agent"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: request lacks %s", layout, want)
			}
		}
		for _, no := range []string{"NESTED-AGENTS-MARKER", "STEERING-MANUAL-MARKER", "STEERING-FILEMATCH-MARKER", "AMAZONQ-RULES-MARKER"} {
			if strings.Contains(body, no) {
				t.Errorf("%s: request has %s", layout, no)
			}
		}
		if i, j := strings.Index(body, "AGENTS-MD-MARKER"), strings.Index(body, "README-MD-MARKER"); i > j {
			t.Errorf("%s: AGENTS.md comes after README.md", layout)
		}
	}

	// NoProjectFiles: only the instructions.
	ws := openWorkspace(t, strata.Options{Dir: dir, ProviderName: "anthropic", NoProjectFiles: true})
	r, err := ws.Render(context.Background(), strata.RenderOptions{Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(r.Body), "MARKER") {
		t.Errorf("NoProjectFiles: the request still has project files:\n%.600s", r.Body)
	}
}

// The default agent's MCP servers come from .mcp.json and
// .kiro/settings/mcp.json and start only once Options.Trust says yes.
func TestDefaultAgentMCPServersNeedTrust(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".mcp.json":               `{"mcpServers":{"claude-srv":{"command":"sh","args":["-c","touch claude-srv-ran; exit 1"]}}}`,
		".kiro/settings/mcp.json": `{"mcpServers":{"kiro-srv":{"command":"sh","args":["-c","touch kiro-srv-ran; exit 1"]}}}`,
	})
	notInTestDir(t, "claude-srv-ran", "kiro-srv-ran") // the servers run in the workspace
	var asked []string
	refuse := func(_ context.Context, r trust.Request) error {
		for _, c := range r.Commands {
			asked = append(asked, c.Name+" "+filepath.Base(c.Source))
		}
		return errors.New("no")
	}
	_, err := strata.Open(context.Background(), strata.Options{Dir: dir, ProviderName: "anthropic", APIKey: "k", Warn: func(string) {}, Trust: refuse})
	if !errors.Is(err, trust.ErrUntrusted) {
		t.Fatalf("Open = %v, want ErrUntrusted", err)
	}
	if strings.Join(asked, ",") != "kiro-srv mcp.json,claude-srv .mcp.json" {
		t.Errorf("asked about %q", asked)
	}
	if ran(dir, "claude-srv-ran") || ran(dir, "kiro-srv-ran") {
		t.Error("an MCP server of an untrusted workspace started")
	}
	var warned []string
	ws, err := strata.Open(context.Background(), strata.Options{Dir: dir, ProviderName: "anthropic", APIKey: "k",
		Warn: func(s string) { warned = append(warned, s) }, Trust: func(context.Context, trust.Request) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ws.Close()
	if !ran(dir, "claude-srv-ran") || !ran(dir, "kiro-srv-ran") {
		t.Errorf("trusted, the servers did not start (warnings %q)", warned)
	}
	// Disabled by the program: not asked about, not started.
	os.Remove(filepath.Join(dir, "claude-srv-ran"))
	ws, err = strata.Open(context.Background(), strata.Options{Dir: dir, ProviderName: "anthropic", APIKey: "k", DisableMCP: true, Trust: refuse})
	if err != nil {
		t.Fatalf("DisableMCP still asked: %v", err)
	}
	ws.Close()
	if ran(dir, "claude-srv-ran") {
		t.Error("DisableMCP started a server")
	}
}

// The default agent reads AGENTS.md and CLAUDE.md in every directory from
// the git root down to the workspace, root first, as Codex does
// (docs/project-files.md); nothing above the git root, nothing below the
// workspace; README.md only at the workspace. Without a git root only the
// workspace's files are read.
func TestDefaultAgentReadsInstructionFilesFromGitRootDown(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	top := t.TempDir()
	writeFiles(t, top, map[string]string{
		"AGENTS.md":                       "ABOVE-GIT-ROOT-MARKER",
		"repo/.git/HEAD":                  "ref: refs/heads/main\n",
		"repo/AGENTS.md":                  "ROOT-AGENTS-MARKER",
		"repo/README.md":                  "ROOT-README-MARKER",
		"repo/pkg/CLAUDE.md":              "PKG-CLAUDE-MARKER",
		"repo/pkg/api/AGENTS.md":          "API-AGENTS-MARKER",
		"repo/pkg/api/README.md":          "API-README-MARKER",
		"repo/pkg/api/internal/AGENTS.md": "BELOW-WORKSPACE-MARKER",
		"repo/pkg/web/AGENTS.md":          "SIBLING-MARKER",
	})
	ws := openWorkspace(t, strata.Options{Dir: filepath.Join(top, "repo", "pkg", "api"), ProviderName: "anthropic", Layout: "flat"})
	r, err := ws.Render(context.Background(), strata.RenderOptions{Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	body := string(r.Body)
	last := -1
	for _, want := range []string{"ROOT-AGENTS-MARKER", "PKG-CLAUDE-MARKER", "API-AGENTS-MARKER", "API-README-MARKER"} {
		i := strings.Index(body, want)
		if i < 0 {
			t.Errorf("request lacks %s", want)
		} else if i < last {
			t.Errorf("%s is out of root-first order", want)
		}
		last = max(last, i)
	}
	for _, no := range []string{"ABOVE-GIT-ROOT-MARKER", "ROOT-README-MARKER", "BELOW-WORKSPACE-MARKER", "SIBLING-MARKER", top} {
		if strings.Contains(body, no) {
			t.Errorf("request has %s", no)
		}
	}
	if !strings.Contains(body, "../../AGENTS.md") || !strings.Contains(body, "../CLAUDE.md") {
		t.Error("files above the workspace are not named by their path relative to it")
	}

	// A .git file (worktree, submodule) marks a root too; no git root: the workspace only.
	writeFiles(t, top, map[string]string{"wt/.git": "gitdir: /elsewhere\n", "wt/AGENTS.md": "WT-ROOT-MARKER", "wt/sub/x": "",
		"plain/AGENTS.md": "PLAIN-PARENT-MARKER", "plain/sub/AGENTS.md": "PLAIN-SUB-MARKER"})
	for dir, want := range map[string][2]string{"wt/sub": {"WT-ROOT-MARKER", ""}, "plain/sub": {"PLAIN-SUB-MARKER", "PLAIN-PARENT-MARKER"}} {
		ws := openWorkspace(t, strata.Options{Dir: filepath.Join(top, dir), ProviderName: "anthropic", Layout: "flat"})
		r, err := ws.Render(context.Background(), strata.RenderOptions{Prompt: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(r.Body), want[0]) || (want[1] != "" && strings.Contains(string(r.Body), want[1])) {
			t.Errorf("%s: want %s and not %q in the request", dir, want[0], want[1])
		}
	}
}
