package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/mcptest"
)

// `strata mcp auth SERVER` authorizes against a real authorization server
// on 127.0.0.1 (the browser step followed headlessly), stores the token
// 0600 in the user's config dir, `mcp list` then connects with it, and
// `strata mcp logout SERVER` deletes it; without a terminal and without a
// token, `mcp list` says to run `strata mcp auth` instead of waiting for a
// browser (docs/mcp-auth.md).
func TestMCPAuthLogout(t *testing.T) {
	p := mcptest.New(t)
	proj := t.TempDir()
	cfgHome := t.TempDir()
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"remote": map[string]any{"url": p.URL}}})
	if err := os.WriteFile(filepath.Join(proj, "mcp.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_CONFIG_HOME=" + cfgHome}
	list := func() result {
		return runCLI(t, proj, env, "mcp", "list", "--mcp-config", "mcp.json", "--trust", "--format", "json")
	}
	if r := list(); r.code == 0 || !strings.Contains(r.stdout, "strata mcp auth remote") {
		t.Fatalf("list before auth: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r := runCLI(t, proj, append(env, "STRATA_MCP_AUTH_BROWSER=headless"), "mcp", "auth", "remote", "--mcp-config", "mcp.json", "--trust")
	if r.code != 0 || !strings.Contains(r.stdout, "authorized for remote") {
		t.Fatalf("auth: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(cfgHome, "strata", "mcp-oauth", "*.json"))
	if len(files) != 1 {
		t.Fatalf("token files %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v, %v", fi.Mode(), err)
	}
	if r := list(); r.code != 0 || !strings.Contains(r.stdout, `"whoami"`) || p.Authorizations() != 1 {
		t.Fatalf("list after auth: exit %d, %d authorizations\n%s\n%s", r.code, p.Authorizations(), r.stdout, r.stderr)
	}
	if r := runCLI(t, proj, env, "mcp", "logout", "remote", "--mcp-config", "mcp.json"); r.code != 0 || !strings.Contains(r.stdout, "deleted the stored token for remote") {
		t.Fatalf("logout: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
		t.Fatalf("token file still there: %v", err)
	}
	if r := runCLI(t, proj, env, "mcp", "logout", "nosuch", "--mcp-config", "mcp.json"); r.code != 2 || !strings.Contains(r.stderr, `no MCP server "nosuch"`) {
		t.Fatalf("logout nosuch: exit %d\n%s", r.code, r.stderr)
	}
}

// In chat's line mode on a terminal (a pseudo-terminal from script(1)), an
// MCP server's form is asked with the lines typed next instead of taking
// them as steering: y, then "41" for age and Enter for name's default; the
// server's answer, with the default filled in, reaches the model.
func TestChatLineAnswersMCPForm(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) not on PATH: no pseudo-terminal to type on")
	}
	ws := t.TempDir()
	url := mcptest.Asker(t, json.RawMessage(`{"type":"object","properties":{
		"age":{"type":"integer","default":30},"name":{"type":"string","default":"John Doe"}}}`))
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"ask": map[string]any{"url": url}}})
	os.WriteFile(filepath.Join(ws, ".mcp.json"), b, 0o644)
	model := mcptest.NewToolModel(t, "ask___ask")
	typed, out, exited := startPTY(t, ws, "chat --plain --approve all --trust",
		"HOME="+t.TempDir(), "STRATA_DATA_DIR="+dataDir, "XDG_CONFIG_HOME="+t.TempDir(),
		"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL="+model.URL, "OPENAI_API_KEY=", "STRATA_ELICIT=")

	io.WriteString(typed, "fill in the form\n")
	waitFor(t, "the form on the terminal", func() bool { return strings.Contains(out.String(), "asks: Your details?") })
	io.WriteString(typed, "y\n41\n\n")
	waitFor(t, "the second model call", func() bool { return len(model.Bodies()) == 2 })
	io.WriteString(typed, "/exit\n")
	if err := <-exited; err != nil {
		t.Fatalf("strata chat under script(1): %v\n%s", err, out)
	}
	bodies := model.Bodies()
	if want := `{\"action\":\"accept\",\"content\":{\"age\":41,\"name\":\"John Doe\"}}`; !strings.Contains(bodies[1], want) {
		t.Fatalf("the tool result sent to the model lacks %s:\n%s\n%s", want, bodies[1], out)
	}
}

// Bad MCP OAuth settings in the environment are usage errors naming the
// variable, before anything starts.
func TestMCPAuthBadEnvironment(t *testing.T) {
	for env, want := range map[string]string{
		"STRATA_MCP_AUTH_BROWSER=firefox":                     "STRATA_MCP_AUTH_BROWSER",
		"STRATA_MCP_CLIENT_METADATA_URL=http://example.com/x": "STRATA_MCP_CLIENT_METADATA_URL",
		"STRATA_MCP_CLIENT_METADATA_URL=https://example.com/": "STRATA_MCP_CLIENT_METADATA_URL",
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "mcp.json"), []byte(`{"mcpServers":{}}`), 0o644)
		r := runCLI(t, dir, []string{env}, "mcp", "list", "--mcp-config", "mcp.json")
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d\n%s", env, r.code, r.stderr)
		}
	}
}
