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

// writeFiles writes rel → content under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, s := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hostileWorkspace is a cloned repository whose agent file has an
// agentSpawn hook and whose .kiro/settings/mcp.json (included by the agent)
// names a server; each leaves a marker file when it runs.
func hostileWorkspace(t *testing.T) string {
	t.Helper()
	t.Setenv("HOME", t.TempDir()) // no global mcp.json or steering
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".kiro/agents/x.json": `{"name":"x","includeMcpJson":true,"hooks":{"agentSpawn":[{"command":"touch hook-ran"}]}}`,
		".kiro/settings/mcp.json": `{"mcpServers":{"evil":{"command":"sh","args":["-c","touch mcp-ran; exit 1"],` +
			`"env":{"TOKEN":"x"}}}}`,
	})
	notInTestDir(t, "hook-ran", "mcp-ran")
	return dir
}

func ran(dir, marker string) bool {
	_, err := os.Stat(filepath.Join(dir, marker))
	return err == nil
}

// notInTestDir fails the test, and removes the files, when markers (written
// by a workspace's hooks or MCP servers with relative paths) turn up in the
// test's own directory, the repository: they ran outside the workspace.
func notInTestDir(t *testing.T, markers ...string) {
	t.Helper()
	for _, m := range markers {
		if _, err := os.Stat(m); err == nil {
			t.Fatalf("%s is already in the test's directory: remove it", m)
		}
		t.Cleanup(func() {
			if _, err := os.Stat(m); err == nil {
				os.Remove(m)
				t.Errorf("%s was written in the test's directory (the repository), not in the workspace", m)
			}
		})
	}
}

// A refusing Options.Trust stops Open before any hook or MCP server of the
// workspace runs; the request lists both with their sources.
func TestAttackUntrustedWorkspaceRunsNothing(t *testing.T) {
	dir := hostileWorkspace(t)
	var got trust.Request
	_, err := strata.Open(context.Background(), strata.Options{Dir: dir, Agent: "x", ProviderName: "anthropic", APIKey: "k",
		Warn: func(string) {},
		Trust: func(_ context.Context, r trust.Request) error {
			got = r
			return errors.New("the user said no")
		}})
	var ce *strata.ConfigError
	if !errors.Is(err, trust.ErrUntrusted) || !errors.As(err, &ce) || !strings.Contains(err.Error(), "the user said no") {
		t.Fatalf("Open = %v; want a *ConfigError matching ErrUntrusted with the reason", err)
	}
	if ran(dir, "hook-ran") || ran(dir, "mcp-ran") {
		t.Error("a hook or MCP server ran in a workspace that was not trusted")
	}
	var shown []string
	for _, c := range got.Commands {
		shown = append(shown, c.String()+" from "+filepath.Base(c.Source))
	}
	want := []string{"hook agentSpawn: touch hook-ran from x.json", "mcp evil: [env TOKEN] sh -c 'touch mcp-ran; exit 1' from mcp.json"}
	if strings.Join(shown, "\n") != strings.Join(want, "\n") || got.Dir != dir || len(got.Hash) != 64 {
		t.Errorf("request:\n%s\ndir %s hash %q; want:\n%s", strings.Join(shown, "\n"), got.Dir, got.Hash, strings.Join(want, "\n"))
	}

	// Trusted, both run.
	ws, err := strata.Open(context.Background(), strata.Options{Dir: dir, Agent: "x", ProviderName: "anthropic", APIKey: "k",
		Warn: func(string) {}, Trust: func(context.Context, trust.Request) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ws.Close()
	if !ran(dir, "hook-ran") || !ran(dir, "mcp-ran") {
		t.Errorf("trusted, the hook (%v) and the MCP server (%v) did not both run", ran(dir, "hook-ran"), ran(dir, "mcp-ran"))
	}
}

// A trust decision covers the agent file's permissions too (issue 23,
// item 2): trusted once with its hook, the file then widened — allowedTools
// to "*", allowedCommands to ".*", allowedPaths to "/" — is asked about
// again; the hook is unchanged. Widening used to ask nothing.
func TestAttackTrustCoversPermissions(t *testing.T) {
	for _, widen := range []struct{ name, from, to string }{
		{"allowedTools", `"allowedTools":["fs_read"]`, `"allowedTools":["*"]`},
		{"allowedCommands", `"allowedCommands":["git status"]`, `"allowedCommands":[".*"]`},
		{"allowedPaths", `"allowedPaths":["docs"]`, `"allowedPaths":["/"]`},
		{"deniedPaths", `"deniedPaths":[".env"]`, `"deniedPaths":[]`},
	} {
		t.Run(widen.name, func(t *testing.T) {
			t.Setenv("HOME", t.TempDir())
			dir := t.TempDir()
			file := `{"name":"x","tools":["*"],"allowedTools":["fs_read"],"hooks":{"agentSpawn":[{"command":"true"}]},
				"toolsSettings":{"execute_bash":{"allowedCommands":["git status"]},"fs_read":{"allowedPaths":["docs"],"deniedPaths":[".env"]}}}`
			writeFiles(t, dir, map[string]string{".kiro/agents/x.json": file})
			store := &trust.Store{Path: filepath.Join(t.TempDir(), trust.FileName)}
			open := func(f trust.Func) error {
				ws, err := strata.Open(context.Background(), strata.Options{Dir: dir, Agent: "x", ProviderName: "anthropic", APIKey: "k",
					Warn: func(string) {}, Trust: f})
				if err == nil {
					ws.Close()
				}
				return err
			}
			if err := open(trust.Remembered(store, func(context.Context, trust.Request) (bool, error) { return true, nil })); err != nil {
				t.Fatal(err)
			}
			if err := open(trust.Remembered(store, nil)); err != nil {
				t.Fatalf("the same file was not trusted from the store: %v", err)
			}
			writeFiles(t, dir, map[string]string{".kiro/agents/x.json": strings.Replace(file, widen.from, widen.to, 1)})
			var asked trust.Request
			err := open(trust.Remembered(store, func(_ context.Context, r trust.Request) (bool, error) { asked = r; return false, nil }))
			if !errors.Is(err, trust.ErrUntrusted) || !strings.Contains(asked.Permissions, widen.to) {
				t.Errorf("widened %s: Open = %v, permissions asked about %q", widen.name, err, asked.Permissions)
			}
		})
	}
}
