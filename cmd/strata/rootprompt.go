package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// rootPrompt makes the bare command work as users of Claude Code and
// kiro-cli expect (docs/cli.md, "strata"): 'strata' opens the chat on a
// terminal (else prints the help), 'strata "a question"' opens it with that
// first prompt (or runs it, as 'strata run', when stdin or stdout is no
// terminal), and 'strata -p "a question"' (--print) runs it and exits.
// Every run and chat flag applies; they are hidden from the root's help,
// which points at 'strata run --help'. A first argument of one word is
// taken for a mistyped command, not a prompt ("strata rnu hi" is a usage
// error naming "run"): quote the question (one argument of several
// words), or pass -p.
func rootPrompt(root *cobra.Command) {
	var f runFlags
	var print bool
	addRunFlags(root, &f)
	addSessionFlags(root.Flags(), &f)
	addKeepAliveFlag(root, &f)
	root.Flags().VisitAll(func(fl *pflag.Flag) { fl.Hidden = true })
	root.Flags().BoolVarP(&print, "print", "p", false, "run the prompt (the arguments, or standard input) and exit, as 'strata run' (see 'strata run --help' for the flags)")
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		terminal := isTerminal(os.Stdin) && isTerminal(os.Stdout)
		switch {
		case print:
			text, err := promptArg(cmd, args, os.Stdin)
			if err != nil {
				return err
			}
			return runMain(cmd.Context(), f, text)
		case len(args) == 0 && terminal:
			return chatMain(cmd.Context(), f, false, os.Stdin, os.Stderr)
		case len(args) == 0:
			return pflag.ErrHelp
		case !strings.ContainsAny(strings.TrimSpace(args[0]), " \t\n"):
			return unknownCommand(cmd, args[0])
		case terminal && f.format == "text":
			f.first = strings.Join(args, " ")
			return chatMain(cmd.Context(), f, false, os.Stdin, os.Stderr)
		}
		return runMain(cmd.Context(), f, strings.Join(args, " "))
	}
}

// unknownCommand is the usage error for a word that names no subcommand
// of c, with the closest one when there is one.
func unknownCommand(c *cobra.Command, word string) error {
	hint := ""
	c.SuggestionsMinimumDistance = 2
	if s := c.SuggestionsFor(word); len(s) > 0 {
		hint = fmt.Sprintf("did you mean %q? ", s[0])
	}
	return usageError{fmt.Errorf("unknown command %q for %q (%svalid: %s; see '%s --help'; to ask a question, quote several words or pass -p)",
		word, c.CommandPath(), hint, strings.Join(subcommandNames(c), ", "), c.CommandPath())}
}
