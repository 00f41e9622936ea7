package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func init() { register(newConfigCmd) }

// effective holds where each setting of the running command came from
// (set by the root's pre-run hook, read by 'strata config').
var effective []origin

func newConfigCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print the effective settings (provider, model, layout, approval, base URLs, limits) and where each came from",
		Long: `Print the settings run, chat, acp and render would use here, and where each came
from: the built-in default, the config file (PATH:LINE), an environment variable or a
flag given to 'strata config' itself (it takes the same setting flags as run).

` + configFileHelp(),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printConfig(os.Stdout, format)
		},
	}
	run, chat := newRunCmd(), newChatCmd()
	for _, s := range settings {
		fl := run.Flags().Lookup(s.flag)
		if fl == nil {
			fl = chat.Flags().Lookup(s.flag) // the interactive commands' own (keepalive)
		}
		cmd.Flags().AddFlag(fl)
	}
	cmd.Flags().StringVar(&format, "format", "table", "table or json")
	return cmd
}

// printConfig writes the effective settings as a table or JSON.
func printConfig(w io.Writer, format string) error {
	path := configPath()
	state := "not found; built-in defaults apply"
	if _, err := os.Stat(path); err == nil {
		state = "read"
	} else if path == "" {
		state = "no user config directory"
	}
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			File     string   `json:"file"`
			Settings []origin `json:"settings"`
		}{path, effective})
	case "table":
	default:
		return usagef("unknown --format %q (valid: table, json)", format)
	}
	fmt.Fprintf(w, "config file: %s (%s)\n\n", path, state)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tVALUE\tFROM")
	for _, o := range effective {
		v := o.Value
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", o.Key, v, o.Source)
	}
	return tw.Flush()
}

// preRun is the root's pre-run hook: it starts the log, then applies the
// config file and environment to the command's flags.
func preRun(c *cobra.Command, _ []string) error {
	logs.startLog(c)
	o, err := applyUserConfig(c)
	if err != nil {
		return err
	}
	effective = o
	for _, x := range o {
		if x.Source != "default" {
			slog.Debug("setting", "key", x.Key, "value", x.Value, "from", x.Source)
		}
	}
	return nil
}
