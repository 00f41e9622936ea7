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

	"github.com/strata-agent/strata/agent"
)

func init() { register(newChatCmd) }

func newChatCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Talk to the agent: one prompt per line from stdin, all in one session",
		Long: `Read prompts from standard input, one per line (end a line with \ to continue it on
the next), and run each as a user turn of the same loop and session, streaming the
answers as 'strata run' does. Lines starting with / are commands:

  /mode ask|allowlist|all   change the approval mode for the next prompts
  /usage                    print the tokens used so far (incl. cache read/write)
  /exit                     end the chat (so does end of input)

A failed prompt (provider error, limit) is reported and the chat goes on. With no
API key the offline demo answers the first prompt only. All 'run' flags apply;
--session ID continues a stored session.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return chatMain(cmd.Context(), f, os.Stdin, os.Stderr)
		},
	}
	addRunFlags(cmd, &f)
	cmd.Flags().StringVar(&f.session, "session", "", "continue this stored session (id or unique prefix)")
	return cmd
}

// chatMain runs the loop over the prompts read from in; prompts ("› ") and
// command replies go to msg.
func chatMain(ctx context.Context, f runFlags, in io.Reader, msg io.Writer) error {
	interactive := isTerminal(in)
	return drive(ctx, f, func(ctx context.Context, s *runSession) (*agent.Result, error) {
		total := &agent.Result{}
		sc := bufio.NewScanner(in)
		sc.Buffer(nil, 1<<20)
		for {
			if interactive {
				fmt.Fprint(msg, "› ")
			}
			text, ok := readPrompt(sc)
			if !ok || text == "/exit" {
				return total, sc.Err()
			}
			if text == "" {
				continue
			}
			if cmd, arg, isCmd := strings.Cut(strings.TrimPrefix(text, "/"), " "); strings.HasPrefix(text, "/") && (isCmd || cmd != "") {
				chatCommand(msg, s, total, cmd, strings.TrimSpace(arg))
				continue
			}
			res, err := s.agent.Prompt(ctx, text)
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
	})
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

func chatCommand(w io.Writer, s *runSession, total *agent.Result, cmd, arg string) {
	switch cmd {
	case "mode":
		m, err := approvalMode(arg)
		if err != nil {
			fmt.Fprintf(w, "strata: /mode: %v\n", err)
			return
		}
		s.agent.SetMode(m)
		fmt.Fprintf(w, "approval mode: %s\n", m)
	case "usage":
		u := total.Usage
		fmt.Fprintf(w, "%d model call(s) · tokens: input %d, output %d, cache read %d, cache write %d\n",
			total.Turns, u.Input, u.Output, u.CacheRead, u.CacheWrite)
	default:
		fmt.Fprintf(w, "strata: unknown command /%s (valid: /mode ask|allowlist|all, /usage, /exit)\n", cmd)
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
