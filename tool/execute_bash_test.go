package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/proctest"
	"github.com/strata-agent/strata/llm"
)

func bash(cmd string) string {
	b, _ := json.Marshal(map[string]string{"command": cmd, "summary": "test"})
	return string(b)
}

func TestExecuteBashExitCodesAndStreams(t *testing.T) {
	ws := workspace(t, map[string]string{"here.txt": "x"})
	env := &Env{Workdir: ws}
	cases := []struct{ cmd, want string }{
		{"echo hello", "exit status: 0\n--- stdout ---\nhello"},
		{"echo out; echo err >&2; exit 3", "exit status: 3\n--- stdout ---\nout\n--- stderr ---\nerr"},
		{"true", "exit status: 0\n(no output)"},
		{"ls", "exit status: 0\n--- stdout ---\nhere.txt"},
		{"pwd", "exit status: 0\n--- stdout ---\n" + ws},
		{"exit 1", "exit status: 1\n(no output)"},
		{"nosuchcommand-xyz", "exit status: 127"},
		{"kill -9 $$", "exit status: none (killed by signal: killed)"},
	}
	for _, c := range cases {
		b := call(t, env, "execute_bash", bash(c.cmd))
		// A non-zero exit status is reported, not an error (kiro).
		if got := ok(t, b); !strings.HasPrefix(got, c.want) {
			t.Errorf("%q:\n%s\nwant prefix:\n%s", c.cmd, got, c.want)
		}
	}
	failed(t, call(t, env, "execute_bash", bash("   ")), "command is empty")
}

func TestExecuteBashTimeoutKillsProcessGroup(t *testing.T) {
	ws := workspace(t, nil)
	env := &Env{Workdir: ws}
	r := NewRegistry(&ExecuteBash{Timeout: 300 * time.Millisecond})
	start := time.Now()
	// The child sleep writes its pid, then the shell waits on it: killing
	// only bash would leave the sleep running.
	b := callWith(t, r, env, "execute_bash", bash("echo started; sleep 30 & echo $! > child.pid; wait"))
	took := time.Since(start)
	failed(t, b, "timed out after 300ms", "killed", "started")
	if took > 5*time.Second {
		t.Errorf("timeout took %s to return", took)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(read(t, filepath.Join(ws, "child.pid"))))
	if err != nil {
		t.Fatal(err)
	}
	proctest.WaitGone(t, pid, "a killed command's child")
}

func TestExecuteBashCancelKillsProcessGroup(t *testing.T) {
	ws := workspace(t, nil)
	r := NewRegistry(Builtins()...)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	var once sync.Once
	env := &Env{Workdir: ws, Progress: func(msg string) {
		if msg == "ready" {
			once.Do(func() { close(started) })
		}
	}}
	done := make(chan llm.Block)
	go func() {
		done <- r.Execute(ctx, env, llm.ToolUseBlock("c", "execute_bash", json.RawMessage(bash("sleep 30 & echo $! > child.pid; echo ready; wait"))))
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("command did not start")
	}
	cancel()
	select {
	case b := <-done:
		failed(t, b, "cancelled")
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not stop the command")
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(read(t, filepath.Join(ws, "child.pid"))))
	proctest.WaitGone(t, pid, "a killed command's child")
}

func TestExecuteBashKillsBackgroundJobsOnExit(t *testing.T) {
	ws := workspace(t, nil)
	start := time.Now()
	got := ok(t, call(t, &Env{Workdir: ws}, "execute_bash", bash("sleep 30 >/dev/null 2>&1 & echo $! > child.pid; echo done")))
	mustContain(t, got, "exit status: 0", "done")
	if time.Since(start) > 5*time.Second {
		t.Errorf("waited for the background job")
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(read(t, filepath.Join(ws, "child.pid"))))
	proctest.WaitGone(t, pid, "a killed command's child")
}

func TestExecuteBashOutputCap(t *testing.T) {
	ws := workspace(t, nil)
	r := NewRegistry(&ExecuteBash{MaxOutput: 3000})
	got := ok(t, callWith(t, r, &Env{Workdir: ws}, "execute_bash", bash(`echo FIRST; for i in $(seq 1 5000); do echo "line $i"; done; echo LAST`)))
	mustContain(t, got, "exit status: 0", "FIRST", "LAST", "bytes of output cut")
	if len(got) > 3500 {
		t.Errorf("capped output is %d bytes", len(got))
	}
	// The default cap keeps a result near 30 000 bytes.
	got = ok(t, call(t, &Env{Workdir: ws}, "execute_bash", bash(`head -c 200000 /dev/zero | tr '\0' 'a'; echo; head -c 100000 /dev/zero | tr '\0' 'b' >&2`)))
	if len(got) > DefaultBashMaxOutput+500 {
		t.Errorf("default-capped output is %d bytes", len(got))
	}
	mustContain(t, got, "--- stderr ---", "bbbb")
}

func TestExecuteBashProgressLines(t *testing.T) {
	ws := workspace(t, nil)
	var mu sync.Mutex
	var lines []string
	env := &Env{Workdir: ws, Progress: func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, msg)
	}}
	ok(t, call(t, env, "execute_bash", bash("echo one; echo two; printf three")))
	if got := strings.Join(lines, "|"); got != "one|two|three" {
		t.Errorf("progress lines %q", got)
	}
}

// deniedCommands refuse (deny wins over allowedCommands); allowedCommands
// refuse nothing: in kiro they are the commands run without prompting, and
// the approval step decides about the others (agent / runtime tests).
func TestExecuteBashDeniedCommands(t *testing.T) {
	ws := workspace(t, nil)
	cases := []struct {
		allowed, denied []string
		cmd             string
		refused         string // "" = runs
	}{
		{nil, nil, "echo hi", ""},
		{nil, []string{"rm .*"}, "rm -rf x", `deniedCommands pattern "rm .*"`},
		{nil, []string{"rm .*"}, "echo x && rm -rf x", `"rm -rf x" matches the deniedCommands pattern`},
		{nil, []string{"rm .*"}, "echo $(rm -rf x)", "deniedCommands"},
		{nil, []string{"rm .*"}, "echo rm", ""},
		{nil, []string{"git push"}, "git push origin", ""}, // anchored: no partial match
		{nil, []string{".*"}, "echo a\necho b", "deniedCommands"},
		{[]string{"echo .*", "ls"}, nil, "ls -la", ""}, // not pre-approved, but not refused
		{[]string{"echo .*"}, nil, "echo a; touch allowed-by-approval", ""},
		{[]string{"echo .*"}, []string{"echo secret.*"}, "echo secret stuff", "deniedCommands"}, // deny wins
		{[]string{"("}, nil, "echo hi", ""},
		{nil, []string{"("}, "echo hi", "invalid"},
	}
	for _, c := range cases {
		env := &Env{Workdir: ws, AllowedCommands: c.allowed, DeniedCommands: c.denied}
		b := call(t, env, "execute_bash", bash(c.cmd))
		if c.refused == "" {
			ok(t, b)
			continue
		}
		failed(t, b, "command refused", c.refused)
	}
}

// allowedCommands pre-approve a command only when every simple command of
// it matches; chaining, substitutions, denied commands and invalid patterns
// are not pre-approved.
func TestCommandPreApproved(t *testing.T) {
	for _, c := range []struct {
		allowed, denied []string
		cmd             string
		want            bool
	}{
		{nil, nil, "ls", false},
		{[]string{"echo .*", "ls"}, nil, "echo ok", true},
		{[]string{"echo .*", "ls"}, nil, "ls", true},
		{[]string{"echo .*", "ls"}, nil, "ls -la", false},
		{[]string{"echo .*"}, nil, "echo a; touch pwned", false},
		{[]string{"echo .*"}, nil, "echo $(touch pwned)", false},
		{[]string{"echo .*"}, nil, "echo a | echo b", true},
		{[]string{"echo .*"}, []string{"echo secret.*"}, "echo secret stuff", false},
		{[]string{"("}, nil, "echo hi", false},
		{[]string{"git status"}, nil, "git status\nrm -rf ~", false},
	} {
		env := &Env{AllowedCommands: c.allowed, DeniedCommands: c.denied}
		if got := CommandPreApproved(env, c.cmd); got != c.want {
			t.Errorf("allowed %q denied %q: CommandPreApproved(%q) = %v, want %v", c.allowed, c.denied, c.cmd, got, c.want)
		}
	}
	if CommandPreApproved(nil, "ls") {
		t.Error("nil env pre-approved a command")
	}
}

// The limits of a deny list, as kiro's regex semantics give them: each of
// these gets past deniedCommands ["rm .*"] and deletes the file, while the
// plain command is refused. The package doc ("Command lists") lists them;
// the test keeps the list honest: when one starts being refused, update the
// doc and the README.
func TestLimitDenyListBypasses(t *testing.T) {
	deny := []string{"rm .*"}
	ws := workspace(t, nil)
	env := &Env{Workdir: ws, DeniedCommands: deny}
	victim := filepath.Join(ws, "victim")
	write(t, victim, "x")
	failed(t, call(t, env, "execute_bash", bash("rm -rf victim")), "deniedCommands")
	if _, err := os.Stat(victim); err != nil {
		t.Fatal("the plain rm ran")
	}
	for _, cmd := range []string{
		"X=rm; $X -rf victim",
		"find . -name victim -delete",
	} {
		t.Run(cmd, func(t *testing.T) {
			write(t, victim, "x")
			ok(t, call(t, env, "execute_bash", bash(cmd)))
			if _, err := os.Stat(victim); err == nil {
				t.Errorf("%q no longer gets past deniedCommands %q: update the package doc and the README", cmd, deny)
			}
		})
	}
}

// Bypasses of a deny list that used to get through (they were
// TestLimitDenyListBypasses cases) and that the parser now sees: the deny
// patterns also match each simple command as bash will run it — quotes
// and escapes removed, words joined by one space, the command name without
// its directory, the command a wrapper (command, exec, env, sudo, …) runs,
// and the code eval or bash -c runs.
func TestAttackDenyListSeesWhatBashRuns(t *testing.T) {
	deny := []string{"rm .*"}
	ws := workspace(t, nil)
	env := &Env{Workdir: ws, DeniedCommands: deny}
	victim := filepath.Join(ws, "victim")
	for _, cmd := range []string{
		"rm\t-rf victim",
		"r''m -rf victim",
		`"rm" -rf victim`,
		`r\m -rf victim`,
		`eval "r""m -rf victim"`,
		`bash -c 'rm -rf victim'`,
		`command rm -rf victim`,
		`env -i LC_ALL=C /bin/rm -rf victim`,
		"/bin/rm -rf victim",
		`echo ok; eval "eval 'rm -rf victim'"`,
	} {
		t.Run(cmd, func(t *testing.T) {
			write(t, victim, "x")
			failed(t, call(t, env, "execute_bash", bash(cmd)), "deniedCommands")
			if _, err := os.Stat(victim); err != nil {
				t.Errorf("%q got past deniedCommands %q", cmd, deny)
			}
		})
	}
}

func TestCommandAllowedNilEnv(t *testing.T) {
	if err := CommandAllowed(nil, "anything"); err != nil {
		t.Error(err)
	}
	if got := fmt.Sprint(splitCommand("a && b || c; d | e\nf $(g) `h`")); got != "[a b c d e f g h]" {
		t.Errorf("splitCommand: %s", got)
	}
}
