//go:build unix

package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/workflow"
)

var workflowSession = regexp.MustCompile(`strata: session ([0-9a-f]+)`)

// workflowModel serves a scripted model on 127.0.0.1: each request is
// attributed to the stage whose marker its system prompt holds, and answered
// with one tool call, next(stage, tool results so far) (calls are
// serialised). count returns the requests of a stage so far.
func workflowModel(t *testing.T, markers map[string]string, next func(stage string, n int) (string, any)) (srv *replay.Server, count func(string) int) {
	var mu sync.Mutex
	counts := map[string]int{}
	srv, err := replay.NewResponder(func(r replay.Request) replay.Response {
		body := string(r.Body)
		stage := ""
		for name, marker := range markers {
			if strings.Contains(body, marker) {
				stage = name
			}
		}
		mu.Lock()
		counts[stage]++
		mu.Unlock()
		name, in := next(stage, strings.Count(body, `"type":"tool_result"`))
		b, _ := json.Marshal(in)
		resp, err := replay.Turn(llm.APIAnthropic, replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock(fmt.Sprintf("c%d", len(body)), name, b)}})
		if err != nil {
			t.Error(err)
		}
		return resp
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv, func(stage string) int {
		mu.Lock()
		defer mu.Unlock()
		return counts[stage]
	}
}

// fixTestsStep is the scripted model's answer in stage stage after n
// tool results of the examples/workflows/fix-tests.yaml run on
// workflowFixture: a plan, the fs_write that fixes calc.go, completions.
func fixTestsStep(stage string, n int) (string, any) {
	switch {
	case stage == "plan":
		return workflow.CompletionTool, map[string]string{"plan": "make Add add"}
	case stage == "implement" && n == 0:
		return "fs_write", map[string]string{"command": "create", "path": "calc.go", "file_text": "package calc\n\nfunc Add(a, b int) int { return a + b }\n"}
	case stage == "implement":
		return workflow.CompletionTool, map[string]string{"result": "fixed"}
	}
	return workflow.CompletionTool, map[string]string{"result": "ok"}
}

// workflowFixture copies the workflow tests' Go module (its test fails) to
// a new directory.
func workflowFixture(t *testing.T) string {
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "calc.go", "calc_test.go"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "workflow", "testdata", "fixmod", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	return dir
}

// "Exit writes what the SM authors durably into the SM's state slot": a
// `strata workflow run` SIGKILLed in the middle of its implement stage is
// resumed by `strata workflow resume SESSION`, which goes on from the last
// completed stage: plan is not run again (the model sees no second plan
// request), implement and test run, and the module's test passes.
func TestWorkflowSIGKILLThenResume(t *testing.T) {
	dir := workflowFixture(t)
	def, _ := filepath.Abs(filepath.Join("..", "..", "examples", "workflows", "fix-tests.yaml"))
	inImplement := make(chan struct{})
	release := make(chan struct{})
	killed := false
	srv, count := workflowModel(t, map[string]string{"plan": "You plan a change", "implement": "You implement this plan", "test": "Run the module's tests"},
		func(stage string, n int) (string, any) {
			if stage == "implement" && !killed {
				killed = true
				close(inImplement)
				<-release // the process is killed while it waits for this answer
			}
			return fixTestsStep(stage, n)
		})
	defer srv.Close()
	defer close(release)
	db := filepath.Join(t.TempDir(), "strata.db")
	env := []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + srv.URL()}
	args := []string{"workflow", "run", def, "--input", "goal=make TestAdd pass", "--db", db, "--model", "claude-sonnet-4-5"}

	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasSuffix(k, "_API_KEY") && !strings.HasSuffix(k, "_BASE_URL") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append(env, "XDG_CONFIG_HOME="+configDir)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-inImplement:
	case <-time.After(2 * time.Minute): // a hang guard, not a timing assertion
		cmd.Process.Kill()
		t.Fatalf("the run never reached the implement stage\nstdout: %s\nstderr: %s", &stdout, &stderr)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()
	m := workflowSession.FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no session id on stderr: %s", &stderr)
	}
	if !strings.Contains(stdout.String(), "stage_exited stage=plan outcome=ok") {
		t.Fatalf("plan did not complete before the kill:\n%s", &stdout)
	}
	// The dead process's writer lease would block the session for
	// session.LeaseTTL; expire it instead of waiting.
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec("UPDATE leases SET expires_at = 0"); err != nil {
		t.Fatal(err)
	}
	sdb.Close()

	r := runCLI(t, dir, env, "workflow", "resume", m[1], "--db", db, "--model", "claude-sonnet-4-5")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if n := count("plan"); n != 1 {
		t.Errorf("plan was asked %d times; want 1 (completed before the kill, not re-run)", n)
	}
	if strings.Contains(r.stdout, "stage=plan") {
		t.Errorf("resume ran plan again:\n%s", r.stdout)
	}
	for _, want := range []string{"stage_entered stage=implement", "stage_assert_outcome stage=test outcome=ok", "workflow_exit outcome=ok"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("resume's output lacks %q:\n%s", want, r.stdout)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "calc.go")); !strings.Contains(string(b), "a + b") {
		t.Errorf("calc.go after the resumed run:\n%s", b)
	}
}

// `strata workflow validate` names the file, line and field of a bad
// definition and exits 2; the repository's examples are valid.
func TestWorkflowValidateCLI(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nstages:\n  - name: a\n    body: hi\n    turnCap: 0\n"), 0o644)
	r := runCLI(t, t.TempDir(), nil, "workflow", "validate", bad)
	if r.code != 2 || !strings.Contains(r.stderr, bad+":5: /stages/0/turnCap:") {
		t.Errorf("exit %d, stderr %q; want 2 and file:5: /stages/0/turnCap", r.code, r.stderr)
	}
	fix, _ := filepath.Abs(filepath.Join("..", "..", "examples", "workflows", "fix-tests.yaml"))
	if r := runCLI(t, t.TempDir(), nil, "workflow", "run", fix, "--input", "nosuch=1"); r.code != 2 || !strings.Contains(r.stderr, `unknown input "nosuch"`) {
		t.Errorf("an unknown input: exit %d, stderr %q; want 2 naming it", r.code, r.stderr)
	}
	if r := runCLI(t, t.TempDir(), nil, "workflow", "run", fix); r.code != 2 || !strings.Contains(r.stderr, "missing required input(s) goal") {
		t.Errorf("a missing input: exit %d, stderr %q; want 2 naming it", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "workflows", "*.yaml"))
	if len(files) < 4 {
		t.Fatalf("examples: %v", files)
	}
	for _, f := range files {
		f, _ = filepath.Abs(f)
		if r := runCLI(t, t.TempDir(), nil, "workflow", "validate", f); r.code != 0 {
			t.Errorf("%s: exit %d: %s", f, r.code, r.stderr)
		}
	}
}

// `strata workflow run --format json` prints one audit event per line; with
// no terminal there is no interactor, so a call outside the stage's
// allowedTools is blocked as GrantDenied (examples/workflows/grant.yaml:
// one glob is covered by a token, the second and execute_bash are not).
func TestWorkflowRunJSONWithoutInteractor(t *testing.T) {
	def, _ := filepath.Abs(filepath.Join("..", "..", "examples", "workflows", "grant.yaml"))
	srv, _ := workflowModel(t, map[string]string{"inspect": "You inspect a Go module"}, func(stage string, n int) (string, any) {
		switch n {
		case 0:
			return "glob", map[string]string{"pattern": "*.go"}
		case 1:
			return "glob", map[string]string{"pattern": "*.mod"}
		case 2:
			return "execute_bash", map[string]string{"command": "echo hi"}
		}
		return workflow.CompletionTool, map[string]string{"result": "done"}
	})
	defer srv.Close()
	r := runCLI(t, workflowFixture(t), []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + srv.URL()},
		"workflow", "run", def, "--format", "json", "--db", filepath.Join(t.TempDir(), "s.db"), "--model", "claude-sonnet-4-5")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	var grants []string
	var last workflow.Event
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e workflow.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("not a JSON event: %q", line)
		}
		if e.Kind == workflow.StageGranted {
			grants = append(grants, e.Tool+" "+e.Outcome)
		}
		last = e
	}
	want := []string{"glob granted", "glob GrantDenied", "execute_bash GrantDenied"}
	if strings.Join(grants, ",") != strings.Join(want, ",") {
		t.Errorf("grants %v; want %v", grants, want)
	}
	if last.Kind != workflow.WorkflowExit || last.Outcome != workflow.OK {
		t.Errorf("last event %+v; want workflow_exit ok", last)
	}
}
