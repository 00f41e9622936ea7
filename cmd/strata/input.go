package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/strata-agent/strata/session"
)

// maxStdinPrompt is the largest prompt read from standard input, in bytes.
const maxStdinPrompt = 16 << 20

// promptArg returns the prompt of a command taking PROMPT...: the arguments
// joined by spaces; or all of stdin when the only argument is "-", or when
// there is none and stdin is not a terminal (echo x | strata run), as
// Claude Code's and Codex's print modes read it. No prompt, an empty one
// and one over 16 MiB are usage errors quoting the command's usage line.
func promptArg(cmd *cobra.Command, args []string, stdin io.Reader) (string, error) {
	fromStdin := len(args) == 1 && args[0] == "-"
	if len(args) == 0 {
		if isTerminal(stdin) {
			return "", usageError{fmt.Errorf("no prompt: pass PROMPT, or '-' to read it from standard input, or pipe it in\nusage: %s (see '%s --help')",
				cmd.UseLine(), cmd.CommandPath())}
		}
		fromStdin = true
	}
	if !fromStdin {
		return strings.Join(args, " "), nil
	}
	b, err := io.ReadAll(io.LimitReader(stdin, maxStdinPrompt+1))
	if err != nil {
		return "", fmt.Errorf("reading the prompt from standard input: %w", err)
	}
	if len(b) > maxStdinPrompt {
		return "", usagef("the prompt on standard input is over %d MiB", maxStdinPrompt>>20)
	}
	text := strings.TrimSpace(string(b))
	if text == "" {
		return "", usageError{fmt.Errorf("no prompt: standard input was empty\nusage: %s (see '%s --help')", cmd.UseLine(), cmd.CommandPath())}
	}
	return text, nil
}

// addSessionFlags adds --session ID and -c/--continue (run and chat).
func addSessionFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&f.session, "session", "", "continue this stored session (id or unique prefix)")
	fl.BoolVarP(&f.continueHere, "continue", "c", false, "continue the most recent session whose working directory is the current one")
}

// sessionToContinue returns the session f continues: --session, else with
// --continue the most recently updated session recorded in the current
// directory (exact path, as the session stores it), else "" (a new
// session). --continue with --session, or with no session recorded here, is
// a usage error.
func sessionToContinue(ctx context.Context, f runFlags) (string, error) {
	if !f.continueHere {
		return f.session, nil
	}
	if f.session != "" {
		return "", usagef("--continue and --session %s: pass one of them", f.session)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	st, err := openStore(f.db)
	if err != nil {
		return "", err
	}
	defer st.Close()
	ss, err := st.ListSessions(ctx, session.ListOptions{Cwd: wd, Limit: 1})
	if err != nil {
		return "", err
	}
	if len(ss) == 0 {
		return "", usagef("--continue: no session was recorded in %s (see 'strata sessions list'; start one without --continue)", wd)
	}
	return ss[0].ID, nil
}
