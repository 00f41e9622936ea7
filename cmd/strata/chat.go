package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
)

func init() { register(newChatCmd) }

func newChatCmd() *cobra.Command {
	var f runFlags
	var t temporalFlags
	var plain bool
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Talk to the agent: a full-screen chat on a terminal, else one prompt per stdin line",
		Long: `On a terminal, a full-screen chat (docs/chat.md): a scrollable transcript (PgUp/PgDn,
the mouse wheel; Up/Down/Home/End when the input is empty) with the model's markdown,
tool calls, results and diffs, printed to the terminal's scrollback when the chat ends;
a status bar with provider, model, session, tokens incl. cache read/write, context use
and cost in USD; tool approvals that show the command or the fs_write diff first,
answered with y (once) / a (always) / n (no) / N (never); Esc (or Ctrl+C) cancels a
running prompt, Ctrl+C when idle or /exit quits. -c and --session show the earlier
conversation first. @path in a prompt attaches that file (fs_read's path rules; Tab
completes it).

Otherwise (or with --plain), read prompts from standard input, one per line (end a
line with \ to continue it on the next), and run each as a user turn of the same
session, streaming the answers as 'strata run' does. On a terminal, a line typed
while a prompt runs (in the full-screen chat too) is a steering message: it reaches
the model before the loop's next model call (one more call is made for it when the
model was giving its final answer); a line that comes after the prompt's loop has
ended runs as the next prompt. Lines starting with / are commands:

` + chatHelp + `

A failed prompt (provider error, limit) is reported and the chat goes on. With no
API key the offline demo answers every prompt (the same recorded list-and-read
answer, its tools run for real). All 'run' flags apply;
--session ID continues a stored session, -c the last session run in this directory.
` + temporalHelp + `
chat --temporal on a terminal is the full-screen chat too (without @path attachments,
-c, and the in-process commands other than /mode and /help); --plain for line mode.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if t.on() {
				if isTerminal(os.Stdin) && isTerminal(os.Stdout) && f.format == "text" && !plain {
					return remoteChatScreen(cmd.Context(), f, t)
				}
				return remoteChat(cmd.Context(), f, t, os.Stdin, os.Stderr)
			}
			return chatMain(cmd.Context(), f, plain, os.Stdin, os.Stderr)
		},
	}
	addRunFlags(cmd, &f)
	cmd.Flags().BoolVar(&plain, "plain", false, "line mode even on a terminal (no full-screen UI)")
	addSessionFlags(cmd.Flags(), &f)
	addKeepAliveFlag(cmd, &f)
	t.add(cmd.Flags())
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
	var asker *lineAsker
	if interactive {
		asker = newLineAsker()
		f.lineAsker = asker
	}
	return drive(ctx, f, func(ctx context.Context, s *strata.Session) (*agent.Result, error) {
		if err := resumePending(ctx, s); err != nil {
			return nil, err
		}
		res, err := plainChat(ctx, s, in, msg, interactive, agent.Mode(f.approve), asker)
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
// A tool approval or an MCP server's form (asker, nil when not
// interactive) is asked while the prompt runs: the lines typed then answer
// it (lineAsker).
func plainChat(ctx context.Context, s *strata.Session, in io.Reader, msg io.Writer, interactive bool, mode agent.Mode, asker *lineAsker) (*agent.Result, error) {
	st := &chatState{mode: mode}
	total := &st.total
	lines, readErr := promptLines(ctx, in)
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
				return total, readErr()
			}
			return total, nil
		}
		if text == "" {
			continue
		}
		if chatSlash(ctx, msg, s, st, text) {
			continue
		}
		done := make(chan struct{})
		var res *agent.Result
		var err error
		go func() {
			res, err = promptWithMentions(ctx, s, func(n string) { fmt.Fprintln(msg, n) }, text)
			close(done)
		}()
		for running := true; running; {
			select {
			case <-done:
				running = false
			case q := <-asker.requests():
				asker.answer(q, msg, &lines)
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

// promptLines reads the prompts of in (readPrompt) on a goroutine of its
// own and sends each on lines, which is closed at the end of input or when
// ctx is done; readErr, once lines is closed, is the error that ended the
// input (nil at its end).
func promptLines(ctx context.Context, in io.Reader) (lines chan string, readErr func() error) {
	lines = make(chan string)
	var err error
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(nil, 1<<20)
		for {
			text, ok := readPrompt(sc)
			if !ok {
				err = sc.Err()
				return
			}
			select {
			case lines <- text:
			case <-ctx.Done():
				return
			}
		}
	}()
	return lines, func() error { return err }
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

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
