package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/internal/tui"
)

func init() { register(newChatCmd) }

func newChatCmd() *cobra.Command {
	var f runFlags
	var plain bool
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Talk to the agent: a full-screen chat on a terminal, else one prompt per stdin line",
		Long: `On a terminal, a full-screen chat: the transcript streams the loop (text, tool calls
and results), the status bar shows the session's tokens incl. cache read/write, tool
approvals are answered with y / a / n, Esc (or Ctrl+C) cancels a running prompt,
the / commands below work as in line mode, and Ctrl+C or /exit quits.

Otherwise (or with --plain), read prompts from standard input, one per line (end a
line with \ to continue it on the next), and run each as a user turn of the same
session, streaming the answers as 'strata run' does. On a terminal, a line typed
while a prompt runs (in the full-screen chat too) is a steering message: it reaches
the model before the loop's next model call (one more call is made for it when the
model was giving its final answer); a line that comes after the prompt's loop has
ended runs as the next prompt. Lines starting with / are commands:

  /mode ask|allowlist|all   change the approval mode for the next prompts
  /agent NAME               swap to another agent of the workspace: its MCP servers
                            replace every running one, the conversation goes on
  /steer TEXT               queue TEXT as a steering message: it reaches the model
                            before the next model call of the running prompt (or the next)
  /usage                    print the tokens used so far (incl. cache read/write)
  /exit                     end the chat (so does end of input)

A failed prompt (provider error, limit) is reported and the chat goes on. With no
API key the offline demo answers every prompt (the same recorded list-and-read
answer, its tools run for real). All 'run' flags apply;
--session ID continues a stored session, -c the last session run in this directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return chatMain(cmd.Context(), f, plain, os.Stdin, os.Stderr)
		},
	}
	addRunFlags(cmd, &f)
	cmd.Flags().BoolVar(&plain, "plain", false, "line mode even on a terminal (no full-screen UI)")
	addSessionFlags(cmd.Flags(), &f)
	addKeepAliveFlag(cmd, &f)
	return cmd
}

// chatMain runs the loop over the prompts read from in; prompts ("› ") and
// command replies go to msg. On a terminal (stdin and stdout) with --format
// text and without --plain it runs the full-screen chat instead.
func chatMain(ctx context.Context, f runFlags, plain bool, in io.Reader, msg io.Writer) error {
	interactive := isTerminal(in)
	if interactive && isTerminal(os.Stdout) && f.format == "text" && !plain {
		return chatScreen(ctx, f)
	}
	var forms *chatForms
	if interactive {
		forms = &chatForms{reqs: make(chan formReq)}
		f.lineForms = forms
	}
	return drive(ctx, f, func(ctx context.Context, s *strata.Session) (*agent.Result, error) {
		if err := resumePending(ctx, s); err != nil {
			return nil, err
		}
		res, err := plainChat(ctx, s, in, msg, interactive, forms)
		if res != nil {
			res.Usage = withKeepAlive(s, res.Usage)
		}
		return res, err
	})
}

// plainChat runs the prompts read from in one at a time. Lines are read
// while a prompt runs: on a terminal (interactive) a line typed then is
// queued as a steering message (strata.Session.SteerRunning: it reaches
// the model before the loop's next model call, in one more turn when the
// model was giving its final answer; one that comes after the loop has
// ended runs as the next prompt), and so is "/steer TEXT" anywhere; other
// lines wait for the running prompt to end. "/steer TEXT" while no prompt
// runs is queued for the next prompt's first model call.
//
// An MCP server's form (forms, nil when not interactive) is asked while the
// prompt runs: the lines typed then answer it (chatForms).
func plainChat(ctx context.Context, s *strata.Session, in io.Reader, msg io.Writer, interactive bool, forms *chatForms) (*agent.Result, error) {
	total := &agent.Result{}
	lines := make(chan string)
	var readErr error
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(nil, 1<<20)
		for {
			text, ok := readPrompt(sc)
			if !ok {
				readErr = sc.Err()
				return
			}
			select {
			case lines <- text:
			case <-ctx.Done():
				return
			}
		}
	}()
	var queued []string
	next := func() (string, bool) {
		if len(queued) > 0 {
			t := queued[0]
			queued = queued[1:]
			return t, true
		}
		if lines == nil { // end of input seen while a prompt ran
			return "", false
		}
		t, ok := <-lines
		return t, ok
	}
	// steerRunning steers the running prompt; a line that comes after its
	// loop has ended runs as the next prompt (never lost nor sent twice).
	steerRunning := func(text string) {
		if s.SteerRunning(text) {
			fmt.Fprintf(msg, "steering: queued for the next model call\n")
			return
		}
		queued = append(queued, text)
		fmt.Fprintf(msg, "steering: the prompt had ended; it runs as the next prompt\n")
	}
	for {
		if interactive {
			fmt.Fprint(msg, "› ")
		}
		text, ok := next()
		if !ok || text == "/exit" {
			if !ok {
				return total, readErr
			}
			return total, nil
		}
		if text == "" {
			continue
		}
		if chatSlash(ctx, msg, s, total, text) {
			continue
		}
		done := make(chan struct{})
		var res *agent.Result
		var err error
		go func() { res, err = s.Prompt(ctx, text); close(done) }()
		for running := true; running; {
			select {
			case <-done:
				running = false
			case r := <-forms.requests():
				r.reply <- forms.ask(r, msg, &lines)
			case l, ok := <-lines:
				switch arg, isSteer := strings.CutPrefix(l, "/steer "); {
				case !ok:
					lines = nil // end of input: the running prompt still finishes
				case isSteer && strings.TrimSpace(arg) != "":
					steerRunning(strings.TrimSpace(arg))
				case interactive && l != "" && l[0] != '/':
					steerRunning(l)
				default:
					queued = append(queued, l)
				}
			}
		}
		if res != nil {
			total.Turns += res.Turns
			total.Usage = total.Usage.Add(res.Usage)
		}
		if ctx.Err() != nil {
			return total, ctx.Err()
		}
		if err != nil {
			fmt.Fprintf(msg, "\nstrata: %v\n", err)
		}
		fmt.Fprintln(os.Stdout)
	}
}

// chatScreen runs the full-screen chat (internal/tui) on the loop.
func chatScreen(ctx context.Context, f runFlags) error {
	var send lazySend
	f.screen = &screenHooks{observe: tui.Observer(send.send), approver: tui.Approver{Send: send.send}, elicit: tui.Elicitor{Send: send.send}}
	return drive(ctx, f, func(ctx context.Context, s *strata.Session) (*agent.Result, error) {
		if err := resumePending(ctx, s); err != nil {
			return nil, err
		}
		logs.fileOnly() // --verbose lines would tear the screen; they stay in the log file
		header := fmt.Sprintf("layout %s · session %.8s", f.layout, s.ID())
		m := tui.New(withChatCommands(s, transcriptSay(send.send), func(ctx context.Context, text string) (*agent.Result, error) { return s.Prompt(ctx, text) }), header)
		m.SetSteer(s.SteerRunning)
		p := tea.NewProgram(m, tea.WithContext(ctx))
		send.set(p.Send)
		_, err := p.Run()
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			err = nil // interrupted from outside: end like /exit
		}
		u, calls := m.Usage()
		return &agent.Result{Usage: u, Turns: calls}, err
	})
}

// lazySend forwards to a program's Send once the program exists; messages
// before that (there are none in practice) are dropped.
type lazySend struct {
	mu sync.Mutex
	fn func(tea.Msg)
}

func (l *lazySend) set(fn func(tea.Msg)) { l.mu.Lock(); l.fn = fn; l.mu.Unlock() }

func (l *lazySend) send(m tea.Msg) {
	l.mu.Lock()
	fn := l.fn
	l.mu.Unlock()
	if fn != nil {
		fn(m)
	}
}

// resumePending runs the tool calls a crash cut off before the chat goes on
// (as 'run --session' does).
func resumePending(ctx context.Context, s *strata.Session) error {
	if len(s.Pending()) == 0 {
		return nil
	}
	fmt.Fprintf(os.Stderr, "strata: session %s has %d tool call(s) a crash cut off: read-only ones run again, an interrupted side-effecting one is reported to the model as interrupted (sessions resume --rerun-interrupted runs them all)\n", s.ID(), len(s.Pending()))
	_, err := s.ResumePending(ctx)
	return err
}

// readPrompt reads one prompt: a line, joined with the next while it ends
// with a backslash.
func readPrompt(sc *bufio.Scanner) (string, bool) {
	var parts []string
	for sc.Scan() {
		line := sc.Text()
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			parts = append(parts, cont)
			continue
		}
		parts = append(parts, line)
		return strings.TrimSpace(strings.Join(parts, "\n")), true
	}
	if len(parts) > 0 {
		return strings.TrimSpace(strings.Join(parts, "\n")), true
	}
	return "", false
}

// chatSlash runs text when it is a chat command (a line starting with "/"
// other than "/exit", which the caller handles): /steer TEXT, /agent NAME,
// /mode, /usage, or an unknown one, which is refused with the valid list
// rather than sent to the model. Answers go to w; total is the chat's usage
// so far (for /usage). It reports whether text was a command. Line mode and
// the full-screen chat (withChatCommands) both use it.
func chatSlash(ctx context.Context, w io.Writer, s *strata.Session, total *agent.Result, text string) bool {
	if len(text) < 2 || text[0] != '/' {
		return false
	}
	cmd, arg, _ := strings.Cut(text[1:], " ")
	arg = strings.TrimSpace(arg)
	switch cmd {
	case "steer":
		if arg == "" {
			fmt.Fprintf(w, "strata: /steer TEXT: no text to steer with\n")
			break
		}
		s.Steer(arg)
		fmt.Fprintf(w, "steering: queued for the next model call\n")
	case "agent":
		swapCommand(ctx, w, s, arg)
	default:
		chatCommand(w, s, total, cmd, arg)
	}
	return true
}

func chatCommand(w io.Writer, s *strata.Session, total *agent.Result, cmd, arg string) {
	switch cmd {
	case "mode":
		m, err := approvalMode(arg)
		if err != nil {
			fmt.Fprintf(w, "strata: /mode: %v\n", err)
			return
		}
		s.SetMode(m)
		fmt.Fprintf(w, "approval mode: %s\n", m)
	case "usage":
		u := withKeepAlive(s, total.Usage)
		fmt.Fprintf(w, "%d model call(s) · tokens: input %d, output %d, cache read %d, cache write %d\n",
			total.Turns, u.Input, u.Output, u.CacheRead, u.CacheWrite)
		if l := keepAliveLine(s); l != "" {
			fmt.Fprintln(w, l)
		}
	default:
		fmt.Fprintf(w, "strata: unknown command /%s (valid: /mode ask|allowlist|all, /steer TEXT, /agent NAME, /usage, /exit)\n", cmd)
	}
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
