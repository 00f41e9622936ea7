package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata/session"
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
		Long: `Print the settings run, chat, acp, render and sessions resume/branch would use here
(bench cache and replay too, for the settings they have), where each came from — the
built-in default, the config file (PATH:LINE), an environment variable or a flag
given to 'strata config' itself (it takes the same setting flags as run) — and which
commands each setting applies to.

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
	logFile := "off"
	if logs.file != nil {
		logFile = logs.path
	}
	db, err := session.DefaultPath()
	if err != nil {
		db = "none: " + err.Error() + " (pass --store or set STRATA_STORE or STRATA_DATA_DIR)"
	}
	shown := slices.Clone(effective)
	for i, o := range shown {
		if o.Key == "store" && o.Value != "" {
			shown[i].Value = redactStore(o.Value) // a DSN may carry a password
			db = shown[i].Value
		}
	}
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			File     string   `json:"file"`
			LogFile  string   `json:"log_file"`
			Database string   `json:"session_db"`
			Settings []origin `json:"settings"`
		}{path, logFile, db, shown})
	case "table":
	default:
		return usagef("unknown --format %q (valid: table, json)", format)
	}
	fmt.Fprintf(w, "config file: %s (%s)\nlog file: %s\nsession database: %s\n\n", path, state, logFile, db)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tVALUE\tFROM")
	for _, o := range shown {
		v := o.Value
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", o.Key, v, o.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printAppliesTo(w)
}

// printAppliesTo lists, for each group of settings that apply to the same
// commands, those commands (base_urls as one entry).
func printAppliesTo(w io.Writer) error {
	var groups []string
	cmds := map[string][]string{} // commands joined → keys
	for _, o := range effective {
		key := o.Key
		if strings.HasPrefix(key, "base_urls.") {
			key = "base_urls"
		}
		c := strings.Join(o.Commands, ", ")
		if slices.Contains(cmds[c], key) {
			continue
		}
		if cmds[c] == nil {
			groups = append(groups, c)
		}
		cmds[c] = append(cmds[c], key)
	}
	if len(groups) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nwhere they apply (bench cache and replay take a provider or model only if they can price it):")
	for _, c := range groups {
		if _, err := fmt.Fprintf(w, "  %s: %s\n", strings.Join(cmds[c], ", "), c); err != nil {
			return err
		}
	}
	return nil
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
			v := x.Value
			if x.Key == "store" {
				v = redactStore(v) // never a DSN's password in the log
			}
			slog.Debug("setting", "key", x.Key, "value", v, "from", x.Source)
		}
	}
	return nil
}
