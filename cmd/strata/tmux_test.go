package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmuxPane is a strata process in a detached tmux session of its own
// server (socket), so tests never touch the user's tmux.
type tmuxPane struct {
	t      *testing.T
	sock   string
	width  int
	height int
}

// panes counts the tmux servers started, for distinct socket names.
var panes int

// startTmux runs shell command line cmd in a w×h tmux pane in dir, skipping
// the test when tmux is not installed (CI installs it).
func startTmux(t *testing.T, dir string, w, h int, cmd string) *tmuxPane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux not installed (apt-get install tmux); the full-screen chat cannot be tested")
		}
		t.Skip("tmux not installed (apt-get install tmux): the full-screen chat is not tested")
	}
	panes++
	p := &tmuxPane{t: t, sock: fmt.Sprintf("strata-test-%d-%d-%s", os.Getpid(), panes, strings.ReplaceAll(t.Name(), "/", "-")), width: w, height: h}
	p.tmux("-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-s", "t", "-c", dir, cmd)
	t.Cleanup(func() { exec.Command("tmux", "-L", p.sock, "kill-server").Run() })
	return p
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// waitFor captures the pane until ok accepts it, failing after a generous
// bound (the offline demo answers in well under a second).
func (p *tmuxPane) waitFor(what string, ok func(screen string) bool) string {
	p.t.Helper()
	var screen string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		screen = p.tmux("capture-pane", "-p", "-t", "t")
		if ok(screen) {
			return screen
		}
	}
	p.t.Fatalf("%dx%d: gave up waiting for %s; the pane shows:\n%s", p.width, p.height, what, screen)
	return ""
}

// The full-screen chat under tmux at 80×24 and 120×40: a prompt is sent
// with send-keys, the offline demo's tool calls and answer appear, the
// status bar keeps the offline marker, session id, price and state at
// either width (the session id was once dropped at 80 columns) and the
// token counts at 120, and /exit ends the program with status 0.
func TestChatScreenUnderTmux(t *testing.T) {
	for _, size := range []struct {
		w, h   int
		status []string
	}{{80, 24, []string{"offline · ", " · session ", " · unknown price · ready"}},
		{120, 40, []string{"offline · strata-demo-r", " · session ", "3 calls · cache r 0 w 0 · ctx ", "unknown price · ready"}}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			ws, data := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(ws, "README.md"), []byte("# tmux demo\n"), 0o644)
			exitFile := filepath.Join(data, "exit")
			cmd := fmt.Sprintf("env STRATA_DATA_DIR=%s STRATA_LOG_FILE=off STRATA_CONFIG=%s ANTHROPIC_API_KEY= OPENAI_API_KEY= %s chat; echo $? > %s",
				data, filepath.Join(data, "none.yaml"), binary, exitFile)
			p := startTmux(t, ws, size.w, size.h, cmd)
			first := func(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
			p.waitFor("the ready status bar", func(s string) bool { return strings.HasSuffix(first(s), "· ready") })
			p.tmux("send-keys", "-t", "t", "-l", "what is in this directory?")
			p.tmux("send-keys", "-t", "t", "Enter")
			screen := p.waitFor("the answer", func(s string) bool {
				return strings.Contains(s, "question.") && strings.HasSuffix(first(s), "· ready")
			})
			status := first(screen)
			for _, want := range size.status {
				if !strings.Contains(status, want) {
					t.Errorf("status bar at %d columns: %q; want %q", size.w, status, want)
				}
			}
			for i, l := range strings.Split(screen, "\n") {
				if n := cols(l); n > size.w {
					t.Errorf("line %d is %d columns wide (> %d): %q", i+1, n, size.w, l)
				}
			}
			for _, want := range []string{"⏺ glob", "README.md", "# tmux demo", "› ask, /help, or /exit"} {
				if !strings.Contains(screen, want) {
					t.Errorf("screen lacks %q:\n%s", want, screen)
				}
			}
			p.tmux("send-keys", "-t", "t", "-l", "/exit")
			p.tmux("send-keys", "-t", "t", "Enter")
			var code []byte
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && len(code) == 0; time.Sleep(100 * time.Millisecond) {
				code, _ = os.ReadFile(exitFile)
			}
			if strings.TrimSpace(string(code)) != "0" {
				t.Errorf("chat after /exit: exit status %q, want 0", code)
			}
		})
	}
}

// The full-screen chat takes the chat commands of line mode (docs/cli.md,
// "chat"): /mode, /usage and a mistyped command are answered in the
// transcript and never reach the model (they once ran as prompts: the
// offline demo answered each one, three model calls apiece).
func TestChatScreenCommandsAreNotPrompts(t *testing.T) {
	ws, data := t.TempDir(), t.TempDir()
	cmd := fmt.Sprintf("env STRATA_DATA_DIR=%s STRATA_LOG_FILE=off STRATA_CONFIG=%s ANTHROPIC_API_KEY= OPENAI_API_KEY= %s chat",
		data, filepath.Join(data, "none.yaml"), binary)
	p := startTmux(t, ws, 120, 30, cmd)
	first := func(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
	p.waitFor("the ready status bar", func(s string) bool { return strings.HasSuffix(first(s), "· ready") })
	for _, c := range []struct{ line, answer string }{
		{"/mode all", "approval mode: all"},
		{"/usage", "0 model call(s) · tokens: input 0"},
		{"/mode", "approval mode: all (change it with"},
		{"/modee ask", "unknown command /modee (valid: /help, /mode"},
	} {
		p.tmux("send-keys", "-t", "t", "-l", c.line)
		p.tmux("send-keys", "-t", "t", "Enter")
		p.waitFor(c.answer, func(s string) bool { return strings.Contains(s, c.answer) })
	}
	screen := p.tmux("capture-pane", "-p", "-t", "t")
	if !strings.Contains(first(screen), " 0 calls") || strings.Contains(screen, "OFFLINE DEMO") {
		t.Errorf("a command reached the model:\n%s", screen)
	}
	p.tmux("send-keys", "-t", "t", "-l", "/exit")
	p.tmux("send-keys", "-t", "t", "Enter")
}

// cols counts the columns of a captured line (every character strata
// draws is one column wide).
func cols(s string) int { return len([]rune(s)) }
