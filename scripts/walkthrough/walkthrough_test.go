package walkthrough

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// walk is the state of one walkthrough: the installed binary and a user's
// environment without API keys.
type walk struct {
	t       *testing.T
	bin     string // GOBIN holding strata
	project string // the user's project directory
	home    string // the user's $HOME
	env     []string
}

// run runs a shell command line in the project with stdin as input ("" =
// empty) and returns stdout, stderr and the exit code.
func (w *walk) run(line, stdin string) (string, string, int) {
	w.t.Helper()
	// A hang guard, not a timing check: strata's commands answer in seconds,
	// but `go install` compiles the tree-sitter grammars (cgo) from cold,
	// which took over 3 minutes on a loaded 2-core machine.
	guard := 3 * time.Minute
	if strings.HasPrefix(line, "go ") {
		guard = 20 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir, cmd.Env, cmd.Stdin = w.project, w.env, strings.NewReader(stdin)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	if ctx.Err() != nil {
		w.t.Fatalf("%s: still running after %v (hang guard); stderr:\n%s", line, guard, se.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("%s: %v", line, err)
	}
	w.t.Logf("$ %s → exit %d", line, code)
	return so.String(), se.String(), code
}

// expect runs line and checks its exit code.
func (w *walk) expect(code int, line, stdin string) (string, string) {
	w.t.Helper()
	out, errOut, got := w.run(line, stdin)
	if got != code {
		w.t.Errorf("$ %s\nexit %d, want %d\nstdout:\n%s\nstderr:\n%s", line, got, code, clip(out), clip(errOut))
	}
	return out, errOut
}

func clip(s string) string {
	if len(s) > 1500 {
		return s[:1500] + "…"
	}
	return s
}

// quickStart returns the command lines of the README's "Quick start" sh
// block, comments removed.
func quickStart(t *testing.T, readme string) []string {
	_, after, ok := strings.Cut(readme, "## Quick start")
	if !ok {
		t.Fatal(`README has no "## Quick start" section`)
	}
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(after)
	if m == nil {
		t.Fatal("README's quick start has no ```sh block")
	}
	var lines []string
	for _, l := range strings.Split(m[1], "\n") {
		if i := strings.Index(l, "  #"); i >= 0 {
			l = l[:i]
		}
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

func TestFreshCloneWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("the walkthrough clones and builds the repository; skipped under -short")
	}
	for _, tool := range []string{"git", "go", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not on $PATH: the walkthrough needs it", tool)
		}
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout (%v): nothing to clone", err)
	}
	if st, _ := exec.Command("git", "status", "--porcelain").Output(); len(st) > 0 {
		t.Logf("uncommitted changes are not part of the clone:\n%s", st)
	}
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "strata")
	if out, err := exec.Command("git", "clone", "--quiet", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	home := filepath.Join(tmp, "home")
	w := &walk{t: t, bin: filepath.Join(tmp, "bin"), project: filepath.Join(tmp, "your-project"), home: home}
	for _, d := range []string{home, w.project, filepath.Join(w.project, ".kiro", "agents")} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(w.project, "README.md"), []byte("# your project\n\nA small project.\n"), 0o644)
	os.WriteFile(filepath.Join(w.project, ".kiro", "agents", "coder.json"), []byte(`{"name":"coder","prompt":"You review code."}`), 0o644)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || strings.HasSuffix(k, "_BASE_URL") || strings.HasPrefix(k, "STRATA_") || strings.HasPrefix(k, "XDG_") ||
			strings.HasPrefix(k, "AWS_") ||
			k == "HOME" || k == "PATH" {
			continue
		}
		w.env = append(w.env, kv)
	}
	w.env = append(w.env, "HOME="+home, "PATH="+w.bin+":"+os.Getenv("PATH"), "GOBIN="+w.bin,
		"GOCACHE="+goEnv(t, "GOCACHE"), "GOMODCACHE="+goEnv(t, "GOMODCACHE"), "CI=")

	readme, err := os.ReadFile(filepath.Join(clone, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range quickStart(t, string(readme)) {
		switch {
		case strings.HasPrefix(line, "go install "):
			// The README installs from a clone: this one. Without
			// -trimpath the build reuses the packages go test compiled
			// (GOCACHE), so the install links rather than compiling the
			// tree-sitter grammars (cgo) from cold: minutes on a loaded
			// 2-core machine.
			save := w.project
			w.project = clone
			w.expect(0, line, "")
			w.project = save
			if _, err := os.Stat(filepath.Join(w.bin, "strata")); err != nil {
				t.Fatalf("%s installed no strata in GOBIN: %v", line, err)
			}
		case strings.HasPrefix(line, "cd "), strings.HasPrefix(line, "export "):
			// Already in the project; offline, no key is set.
		default:
			out, _ := w.expect(0, line, "")
			if strings.HasPrefix(line, "strata --version") && !strings.HasPrefix(out, "strata ") {
				t.Errorf("strata --version: %q", out)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	checkExitCodes(t, w)
}

// checkExitCodes checks the README's exit codes with the installed binary.
func checkExitCodes(t *testing.T, w *walk) {
	out, _ := w.expect(0, "strata sessions list --here --format json", "")
	var sessions []struct{ ID string }
	if err := json.Unmarshal([]byte(out), &sessions); err != nil || len(sessions) == 0 {
		t.Fatalf("sessions list --here --format json: %v\n%s", err, out)
	}
	w.expect(0, "strata sessions resume "+sessions[0].ID+" 'and once more'", "")
	w.expect(0, "strata sessions show "+sessions[0].ID, "")
	w.expect(0, "strata chat --plain", "hello\nand again\n")
	w.expect(0, "strata config", "")
	w.expect(0, "strata models", "")
	// An editor (Zed's agent_servers entry runs "strata acp") initializes
	// over stdio; closing stdin ends the server.
	out, _ = w.expect(0, "strata acp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	if !strings.Contains(out, `"protocolVersion":1`) {
		t.Errorf("strata acp initialize: %s", out)
	}
	// The troubleshooting log is in the default place, the user's cache dir.
	if b, err := os.ReadFile(filepath.Join(w.home, ".cache", "strata", "strata.log")); err != nil || !strings.Contains(string(b), `command="strata acp"`) {
		t.Errorf("log file under ~/.cache/strata: %v\n%s", err, clip(string(b)))
	}

	for _, c := range []struct {
		line, want string
	}{
		{"strata run --no-such-flag x", "see 'strata run --help'"},
		{"strata sessions resume", "usage: strata sessions resume"},
		{"strata no-such-command", `unknown command "no-such-command"`},
		{"strata run --agent no-such-agent x", "coder"},
		{"strata run --layout no-such-layout x", "cachefit"},
		{"strata render --provider no-such-provider x", "anthropic"},
		{"STRATA_CONFIG=bad.yaml strata run x", "bad.yaml:1: modle: unknown key"},
		{"strata bench cache --trajectories . --model gpt-99", "claude-sonnet-4-5"},
		{"strata bench cache --trajectories . --report /no/such/dir/r.html", "--report /no/such/dir/r.html"},
		// No AWS credentials anywhere (clean HOME, no AWS_* variables, the
		// instance-metadata source pointed at a closed loopback port).
		{"AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:1 strata run --provider bedrock x", "AWS_ACCESS_KEY_ID"},
	} {
		os.WriteFile(filepath.Join(w.project, "bad.yaml"), []byte("modle: x\n"), 0o644)
		if _, errOut := w.expect(2, c.line, ""); !strings.Contains(errOut, c.want) {
			t.Errorf("$ %s: stderr lacks %q:\n%s", c.line, c.want, errOut)
		}
	}
	os.Remove(filepath.Join(w.project, "bad.yaml"))
	// A runtime failure (the provider cannot be reached) exits 1.
	w.expect(1, "ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL=http://127.0.0.1:1 strata run --request-timeout 10s --max-retry-delay 0 x", "")
	interrupt(t, w)
}

// interrupt sends Ctrl-C (SIGINT) to a streaming run: exit 130 and the
// resume hint.
func interrupt(t *testing.T, w *walk) {
	cmd := exec.Command(filepath.Join(w.bin, "strata"), "run", "--replay-delay", "300ms", "list this directory")
	cmd.Dir, cmd.Env = w.project, w.env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(stdout).ReadString(' '); err != nil { // mid-stream
		t.Fatalf("no streamed output: %v\n%s", err, stderr.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	go io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "resume with: strata sessions resume ") {
		t.Errorf("Ctrl-C: %v, want exit 130 and the resume hint\n%s", err, stderr.String())
	}
}

func goEnv(t *testing.T, key string) string {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}
