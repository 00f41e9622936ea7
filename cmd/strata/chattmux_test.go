package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
)

// replayFiles writes each reply as a raw SSE file (as an Anthropic stream)
// and returns the --replay flags that serve them in order.
func replayFlags(t *testing.T, replies ...[]llm.Block) string {
	t.Helper()
	dir := t.TempDir()
	var flags []string
	for i, blocks := range replies {
		stop := llm.StopEndTurn
		for _, b := range blocks {
			if b.Type == llm.BlockToolUse {
				stop = llm.StopToolUse
			}
		}
		flags = append(flags, "--replay", writeStream(t, dir, fmt.Sprintf("r%d.sse", i), llm.Usage{Input: 1200, Output: 300}, stop, blocks...))
	}
	return strings.Join(append(flags, "--provider", "anthropic"), " ")
}

// chatCommandLine is the shell command that runs the chat with args in a
// fresh data directory, keeping the pane open after it ends (its exit
// status goes to data/exit) so that the scrollback can be read.
func chatCommandLine(data, args string) string {
	return fmt.Sprintf("env STRATA_DATA_DIR=%s STRATA_LOG_FILE=off STRATA_CONFIG=%s ANTHROPIC_API_KEY= OPENAI_API_KEY= %s chat %s; echo $? > %s/exit; sleep 60",
		data, filepath.Join(data, "none.yaml"), binary, args, data)
}

// send types line into the pane and presses Enter.
func (p *tmuxPane) send(line string) {
	p.tmux("send-keys", "-t", "t", "-l", line)
	p.tmux("send-keys", "-t", "t", "Enter")
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// longAnswer is a markdown answer of 30 paragraphs, each wider than 120
// columns, made of vocabulary's words only.
var vocabulary = strings.Fields("paragraph internationalization of the globbing configuration requires considerable deliberation before anything else happens and every subsequent reconfiguration")

func longAnswer() string {
	var b strings.Builder
	b.WriteString("# Report\n\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "Paragraph %02d: %s.\n\n", i, strings.Join(vocabulary[1:], " "))
	}
	return b.String()
}

// splitWords returns the words on screen that are a piece of a vocabulary
// word but not a word: a word split at the line's end.
func splitWords(screen string) []string {
	words := map[string]bool{}
	for _, w := range vocabulary {
		words[strings.ToLower(w)] = true
	}
	var bad []string
	for _, tok := range regexp.MustCompile(`[A-Za-z]{3,}`).FindAllString(screen, -1) {
		tok = strings.ToLower(tok)
		if words[tok] {
			continue
		}
		for w := range words {
			if strings.HasPrefix(w, tok) || strings.HasSuffix(w, tok) {
				bad = append(bad, tok)
				break
			}
		}
	}
	return bad
}

// The transcript scrolls and wraps (docs/cli.md, "chat"), at 80×24 and
// 120×40: a 90-line markdown answer shows its end; no word is split at a
// line's end; PgUp shows earlier paragraphs and the status bar says
// "scrolled"; after /exit the whole conversation is in the terminal's
// scrollback; and `chat -c` opens with the earlier conversation on screen.
func TestChatScreenScrollsAndWrapsUnderTmux(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			ws, data := t.TempDir(), t.TempDir()
			p := startTmux(t, ws, size[0], size[1], chatCommandLine(data, replayFlags(t, []llm.Block{llm.TextBlock(longAnswer())})))
			p.waitFor("the ready status bar", func(s string) bool { return strings.HasSuffix(firstLine(s), "· ready") })
			p.send("write the report")
			end := p.waitFor("the answer's end", func(s string) bool { return strings.Contains(s, "Paragraph 30") })
			if bad := splitWords(end); len(bad) > 0 {
				t.Errorf("words split at a line's end: %q\n%s", bad, end)
			}
			if strings.Contains(end, "Paragraph 01") {
				t.Errorf("the whole answer fits the screen; the test needs it taller:\n%s", end)
			}
			p.tmux("send-keys", "-t", "t", "PgUp")
			up := p.waitFor("an earlier page", func(s string) bool { return !strings.Contains(s, "Paragraph 30") })
			if !strings.Contains(firstLine(up), "scrolled") {
				t.Errorf("status bar while scrolled: %q", firstLine(up))
			}
			if bad := splitWords(up); len(bad) > 0 {
				t.Errorf("words split at a line's end: %q\n%s", bad, up)
			}
			p.tmux("send-keys", "-t", "t", "End")
			p.waitFor("the end again", func(s string) bool { return strings.Contains(s, "Paragraph 30") })
			p.send("/exit")
			p.waitFor("the transcript in the scrollback", func(string) bool {
				s := p.tmux("capture-pane", "-p", "-t", "t", "-S", "-400")
				return strings.Contains(s, "› write the report") && strings.Contains(s, "Paragraph 01") && strings.Contains(s, "Paragraph 30")
			})
			// chat -c: the earlier conversation is on screen.
			q := startTmux(t, ws, size[0], size[1], chatCommandLine(data, "-c"))
			again := q.waitFor("the earlier conversation", func(s string) bool {
				return strings.Contains(s, "Paragraph 30") && strings.Contains(s, "── now ──") && strings.HasSuffix(firstLine(s), "· ready")
			})
			if bad := splitWords(again); len(bad) > 0 {
				t.Errorf("resumed: words split: %q\n%s", bad, again)
			}
			q.tmux("send-keys", "-t", "t", "Home")
			q.waitFor("the resumed session's first prompt", func(s string) bool {
				return strings.Contains(s, "earlier message(s) ──") && strings.Contains(s, "› write the report")
			})
			q.send("/exit")
		})
	}
}

// An fs_write waiting for approval shows its whole diff, coloured, before
// the decision (docs/cli.md, "chat"); the file is unchanged until "y";
// the answer is shown in words; the status bar prices the replayed model.
func TestChatScreenShowsDiffBeforeApprovalUnderTmux(t *testing.T) {
	ws, data := t.TempDir(), t.TempDir()
	notes := filepath.Join(ws, "notes.txt")
	os.WriteFile(notes, []byte("alpha line\nbeta line\ngamma line\n"), 0o644)
	in, _ := json.Marshal(map[string]string{"command": "str_replace", "path": "notes.txt", "old_str": "beta line", "new_str": "BETA LINE & <changed>"})
	flags := replayFlags(t, []llm.Block{llm.ToolUseBlock("toolu_1", "fs_write", in)}, []llm.Block{llm.TextBlock("Done: beta changed.")})
	p := startTmux(t, ws, 80, 24, chatCommandLine(data, flags+" --model claude-sonnet-4-5 --approve ask"))
	p.waitFor("the ready status bar", func(s string) bool { return strings.HasSuffix(firstLine(s), "· ready") })
	p.send("change beta")
	screen := p.waitFor("the approval question", func(s string) bool { return strings.Contains(s, "allow fs_write?") })
	for _, want := range []string{"? fs_write wants to make this change:", "--- a/notes.txt", "+++ b/notes.txt", "-beta line", "+BETA LINE & <changed>", " gamma line", "[y] once  [a] always  [n] no  [N] never"} {
		if !strings.Contains(screen, want) {
			t.Errorf("approval screen lacks %q:\n%s", want, screen)
		}
	}
	if b, _ := os.ReadFile(notes); strings.Contains(string(b), "BETA") {
		t.Fatal("the file changed before the approval")
	}
	colour := p.tmux("capture-pane", "-p", "-e", "-t", "t")
	if !regexp.MustCompile(`\x1b\[[0-9;]*3[12]m[^\n]*[-+]`).MatchString(colour) {
		t.Errorf("the diff is not coloured:\n%q", colour)
	}
	p.tmux("send-keys", "-t", "t", "y")
	// The answer's text is on screen before the turn ends; the status bar
	// prices the session once the turn is over ("· ready").
	done := p.waitFor("the answer and the turn's end", func(s string) bool {
		return strings.Contains(s, "Done: beta changed.") && strings.HasSuffix(firstLine(s), "· ready")
	})
	if !strings.Contains(done, "→ allowed once") {
		t.Errorf("the decision is not shown in words:\n%s", done)
	}
	if b, _ := os.ReadFile(notes); !strings.Contains(string(b), "BETA LINE & <changed>") {
		t.Errorf("approved edit not written: %q", b)
	}
	if st := firstLine(done); !regexp.MustCompile(`\$0\.\d{4} · ready$`).MatchString(st) {
		t.Errorf("status bar lacks the session cost in USD: %q", st)
	}
	p.send("/exit")
}

// Warnings go into the transcript, never over the screen (the issue: /agent
// wrote an agent's warnings to stderr across the status bar).
func TestChatScreenKeepsWarningsInsideUnderTmux(t *testing.T) {
	ws, data := t.TempDir(), t.TempDir()
	dir := filepath.Join(ws, ".kiro", "agents")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "alpha.json"), []byte(`{"name":"alpha","prompt":"you are alpha","tools":["fs_read"]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "beta.json"), []byte(`{"name":"beta","prompt":"you are beta","tools":["fs_read"],"resources":["file://missing-notes.md"]}`), 0o644)
	p := startTmux(t, ws, 80, 24, chatCommandLine(data, "--agent alpha"))
	p.waitFor("the ready status bar", func(s string) bool { return strings.HasSuffix(firstLine(s), "· ready") })
	p.send("/agent swap beta")
	screen := p.waitFor("the swap", func(s string) bool { return strings.Contains(s, "agent: beta") })
	if !strings.Contains(screen, "warning:") || !strings.Contains(screen, "missing-notes.md") {
		t.Errorf("the warning is not in the transcript:\n%s", screen)
	}
	if st := firstLine(screen); !strings.HasPrefix(st, "offline · ") || !strings.HasSuffix(st, "· ready") {
		t.Errorf("status bar torn: %q", st)
	}
	p.send("/exit")
}

// 'strata "a question"' on a terminal opens the chat with that prompt
// (docs/cli.md, "strata"); Ctrl+C cancels the running prompt and says so
// in words (it once printed "strata: context canceled"); a second Ctrl+C
// ends the chat with status 0.
func TestBareStrataOpensTheChatUnderTmux(t *testing.T) {
	ws, data := t.TempDir(), t.TempDir()
	cmd := fmt.Sprintf("env STRATA_DATA_DIR=%s STRATA_LOG_FILE=off STRATA_CONFIG=%s ANTHROPIC_API_KEY= OPENAI_API_KEY= %s --replay-delay 300ms 'what is here?'; echo $? > %s/exit; sleep 60",
		data, filepath.Join(data, "none.yaml"), binary, data)
	p := startTmux(t, ws, 80, 24, cmd)
	p.waitFor("the first prompt running", func(s string) bool {
		return strings.Contains(s, "› what is here?") && strings.Contains(firstLine(s), "enter steers")
	})
	p.tmux("send-keys", "-t", "t", "C-c")
	screen := p.waitFor("the cancel", func(s string) bool { return strings.Contains(s, "⊘ cancelled") })
	if strings.Contains(screen, "context canceled") {
		t.Errorf("Ctrl+C shows Go's error text:\n%s", screen)
	}
	p.tmux("send-keys", "-t", "t", "C-c")
	p.waitFor("the exit status", func(string) bool {
		b, _ := os.ReadFile(filepath.Join(data, "exit"))
		return strings.TrimSpace(string(b)) == "0"
	})
}
