package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
)

// A malformed trajectory among good ones is skipped with a warning naming
// file:line:col, and the bench prices the rest; a directory of only
// malformed files still fails.
func TestBenchSkipsMalformedTrajectory(t *testing.T) {
	src := shared.Path(t, "data/trajectories/mini-swe-agent/train/astropy__astropy-12907.traj.json")
	good, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.traj.json"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "b.traj.json")
	if err := os.WriteFile(bad, []byte("{\n  \"trajectory_format\": \"mini-swe-agent-1\",\n  \"messages\": [}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, t.TempDir(), nil, "bench", "cache", "--trajectories", dir, "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if want := "strata: warning: trajectory: " + bad + ":3:16: invalid character '}'"; !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "skipped") {
		t.Errorf("stderr lacks %q … skipped:\n%s", want, r.stderr)
	}
	if !strings.Contains(r.stdout, `"trajectories": 1`) {
		t.Errorf("the good trajectory was not priced alone:\n%.300s", r.stdout)
	}

	if err := os.Remove(filepath.Join(dir, "a.traj.json")); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, t.TempDir(), nil, "bench", "cache", "--trajectories", dir)
	if r.code != 2 || !strings.Contains(r.stderr, "none of the 1 *.traj.json files") {
		t.Errorf("only malformed files: exit %d, stderr %s; want 2 and 'none of the 1 …'", r.code, r.stderr)
	}
}

// `agents list` warnings name the file they refer to (the agent file or the
// workspace mcp.json the server came from) as well as the JSON pointer, and
// servers from mcp.json files have their commands checked: missing from
// $PATH, or a path that is not executable.
func TestAgentsListWarningsNameTheFile(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	writeAgent(t, ws, ".kiro/agents/dev.json", `{"name":"dev","includeMcpJson":true,
		"mcpServers":{"own":{"command":"strata-test-no-such-own-command"}}}`)
	writeAgent(t, ws, ".kiro/settings/mcp.json", `{"mcpServers":{
		"gone":{"command":"strata-test-no-such-command"},
		"plain":{"command":"./tools/server.sh"},
		"off":{"command":"strata-test-disabled","disabled":true},
		"own":{"command":"strata-test-shadowed-by-the-agent"}}}`)
	writeAgent(t, ws, "tools/server.sh", "#!/bin/sh\n") // 0644: not executable
	env := []string{"HOME=" + home}
	r := runCLI(t, ws, env, "agents", "list", "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var infos []agentInfo
	if err := json.Unmarshal([]byte(r.stdout), &infos); err != nil || len(infos) != 1 {
		t.Fatalf("agents list json: %v\n%s", err, r.stdout)
	}
	agentFile := filepath.Join(ws, ".kiro", "agents", "dev.json")
	mcpFile := filepath.Join(ws, ".kiro", "settings", "mcp.json")
	want := []string{
		agentFile + `: /mcpServers/own/command: command "strata-test-no-such-own-command" not found on $PATH; the server will fail to start`,
		mcpFile + `: /mcpServers/gone/command: command "strata-test-no-such-command" not found on $PATH; the server will fail to start`,
		mcpFile + `: /mcpServers/plain/command: command ` + filepath.Join(ws, "tools", "server.sh") + ` is not executable (chmod +x it); the server will fail to start`,
	}
	all := strings.Join(infos[0].Warnings, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("no warning\n  %s\namong\n  %s", w, strings.ReplaceAll(all, "\n", "\n  "))
		}
	}
	if strings.Contains(all, "strata-test-disabled") || strings.Contains(all, "strata-test-shadowed") {
		t.Errorf("a disabled server, or one the agent's own server of the same name replaces, was checked:\n%s", all)
	}
	r = runCLI(t, ws, env, "agents", "list")
	if want := "dev: warning: .kiro/settings/mcp.json: /mcpServers/gone/command: "; !strings.Contains(r.stdout, want) {
		t.Errorf("table lacks %q (path relative to the workspace):\n%s", want, r.stdout)
	}
}

// `mcp list` exits 1 when every server failed, says so, and shows the tail
// of each failing server's stderr; a file whose servers are all disabled
// is not a failure.
func TestMCPListAllFailedShowsStderr(t *testing.T) {
	ws := t.TempDir()
	cfg := filepath.Join(ws, "mcp.json")
	writeAgent(t, ws, "mcp.json", `{"mcpServers":{
		"crashes":{"command":"sh","args":["-c","echo 'Error: cannot find module server.js' >&2; exit 1"]},
		"missing":{"command":"strata-test-no-such-command"}}}`)
	r := runCLI(t, ws, nil, "mcp", "list", "--trust", "--mcp-config", cfg)
	if r.code != 1 {
		t.Errorf("exit %d, want 1 when every server failed\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"@crashes stderr (last lines):\n  Error: cannot find module server.js", "missing"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, want := range []string{"all 2 MCP server(s) failed", cfg + `: /mcpServers/missing/command: command "strata-test-no-such-command" not found on $PATH`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	r = runCLI(t, ws, nil, "mcp", "list", "--trust", "--mcp-config", cfg, "--format", "json")
	if r.code != 1 || !strings.Contains(r.stdout, `"stderr_tail": "Error: cannot find module server.js"`) {
		t.Errorf("json: exit %d, want 1 and stderr_tail:\n%s", r.code, r.stdout)
	}

	writeAgent(t, ws, "mcp.json", `{"mcpServers":{"off":{"command":"sh","disabled":true}}}`)
	if r := runCLI(t, ws, nil, "mcp", "list", "--trust", "--mcp-config", cfg); r.code != 0 {
		t.Errorf("only disabled servers: exit %d, want 0\n%s", r.code, r.stderr)
	}
}

// Every command appends to a log file ($STRATA_LOG_FILE, else under
// $XDG_STATE_HOME or the user's cache directory) with its start and exit
// code; --verbose adds the provider's HTTP requests, on stderr too. A log
// file that cannot be opened is a warning, and 'off' writes none.
func TestVerboseAndLogFile(t *testing.T) {
	ws := t.TempDir()
	logFile := filepath.Join(t.TempDir(), "x.log")
	r := runCLI(t, ws, []string{"STRATA_LOG_FILE=" + logFile}, "run", "--verbose", "list the files")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if want := `level=DEBUG msg="http request" `; !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "strata: logging to "+logFile) {
		t.Errorf("--verbose stderr lacks %q and the log path:\n%s", want, r.stderr)
	}
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`msg=start `, `command="strata run" flags="--verbose=true"`, `msg="http request" `, "provider=anthropic method=POST url=http://127.0.0.1:", `msg=exit `, ` code=0 `} {
		if !strings.Contains(string(b), want) {
			t.Errorf("log lacks %q:\n%s", want, b)
		}
	}

	state := t.TempDir()
	r = runCLI(t, ws, []string{"STRATA_LOG_FILE=", "XDG_STATE_HOME=" + state}, "render", "--provider", "nope", "x")
	b, err = os.ReadFile(filepath.Join(state, "strata", "strata.log"))
	if r.code != 2 || err != nil || !strings.Contains(string(b), " code=2 ") || !strings.Contains(string(b), "level=INFO msg=exit") ||
		strings.Contains(string(b), "DEBUG") {
		t.Errorf("default log file: exit %d, %v:\n%s", r.code, err, b)
	}

	r = runCLI(t, ws, []string{"STRATA_LOG_FILE=off", "XDG_STATE_HOME=" + state}, "models")
	if r.code != 0 || strings.Contains(r.stderr, "log") {
		t.Errorf("STRATA_LOG_FILE=off: exit %d, stderr %s", r.code, r.stderr)
	}
	r = runCLI(t, ws, nil, "--log-file", filepath.Join(logFile, "sub", "y.log"), "models")
	if r.code != 0 || !strings.Contains(r.stderr, "strata: warning: log file: ") {
		t.Errorf("unopenable log file: exit %d (want 0), stderr %s (want a warning)", r.code, r.stderr)
	}
}
