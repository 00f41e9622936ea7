// Command strata is a turn engine for LLM agents: it lays out each request
// explicitly, runs the agent loop around it, and shows what it sends.
//
// Exit codes: 0 ok, 1 runtime failure (provider error, tool loop limit), 2
// usage or configuration error (the message names the flag, file or variable),
// 130 run or chat interrupted by Ctrl-C (stderr says how to resume).
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	_ "github.com/strata-agent/strata/llm/all"     // link every provider client
	_ "github.com/strata-agent/strata/prompt/flat" // register layouts
	_ "github.com/strata-agent/strata/prompt/kiro"
	_ "github.com/strata-agent/strata/prompt/panels"
	_ "github.com/strata-agent/strata/prompt/peers"
	_ "github.com/strata-agent/strata/prompt/tiered"
)

// usageError marks errors that exit with status 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func main() {
	os.Exit(execute(os.Args[1:]))
}

// execute runs the CLI with args and returns the exit code.
func execute(args []string) int {
	root := newRoot()
	root.SetArgs(args)
	c, _, _ := root.Find(args)
	watch := watchInterrupt(c)
	err := root.Execute()
	flushTelemetry()
	code := exitCode(err, watch)
	logs.endLog(code, err)
	return code
}

// exitCode prints err (when not an interrupt, which watch reports) and
// returns the exit status: 0, 1, 2 for a usage error, 130 for Ctrl-C.
func exitCode(err error, watch *interruptWatch) int {
	if watch.interrupted(err, os.Stderr) {
		return exitInterrupted
	}
	if err == nil {
		return 0
	}
	fmt.Fprintln(os.Stderr, "strata:", err)
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "strata",
		Short: "A turn engine for LLM agents: explicit request layouts, an agent loop, and their cost",
		Long: `strata assembles every model request from explicit layers (system text, tools,
context, history), runs the agent loop around it, and shows exactly what it sends.

  strata                      the chat (on a terminal; else this help)
  strata "a question"         the chat, starting with that prompt (on a terminal;
                              else as 'strata run')
  strata -p "a question"      answer and exit, as 'strata run' (all its flags apply)

Without an API key, 'strata run' plays a recorded demo session offline.

Settings come from flags, then STRATA_* variables, then the config file
($STRATA_CONFIG, else ~/.config/strata/config.yaml on Linux): 'strata config'
shows which apply and where each came from. Every command logs to a file
($STRATA_LOG_FILE, else $XDG_STATE_HOME/strata/strata.log or
~/.cache/strata/strata.log); --verbose adds debug detail there and on stderr.`,
		Version:       versionLine(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	addLogFlags(root)
	root.PersistentPreRunE = preRun
	rootPrompt(root)
	for _, c := range commands {
		root.AddCommand(c())
	}
	usageErrors(root)
	return root
}

// usageErrors makes every argument error of c and the commands below it a
// usage error (exit 2) that quotes the command's usage line. A command that
// only groups subcommands (root, sessions, bench, …) prints its help when
// called alone and reports an unknown subcommand as a usage error.
func usageErrors(c *cobra.Command) {
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = cobra.ArbitraryArgs // checked by RunE, so that Find does not fail first
		c.RunE = func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return pflag.ErrHelp // cobra prints the help; exit 0
			}
			return unknownCommand(c, args[0])
		}
	}
	if check := c.Args; check != nil {
		c.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				return usageError{fmt.Errorf("%w\nusage: %s (see '%s --help')", err, c.UseLine(), c.CommandPath())}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageErrors(sub)
	}
}

// subcommandNames lists the names of c's visible subcommands.
func subcommandNames(c *cobra.Command) []string {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return names
}

// commands builds the subcommands; each command's file adds its constructor
// with register in an init function, so commands live in files of their own.
var commands = []func() *cobra.Command{newRunCmd, newRenderCmd}

// register adds a subcommand constructor (call it from init).
func register(newCmd func() *cobra.Command) { commands = append(commands, newCmd) }
