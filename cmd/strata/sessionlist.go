package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

// listFlags are the flags of 'sessions list'.
type listFlags struct {
	format, cwd string
	here        bool
}

func (l *listFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&l.format, "format", "table", "table or json")
	fl.StringVar(&l.cwd, "cwd", "", "only sessions whose working directory is DIR (made absolute; matched exactly)")
	fl.BoolVar(&l.here, "here", false, "only sessions run in the current directory (the ones -c would continue)")
}

// options checks the flags and returns the store query they describe.
func (l *listFlags) options() (session.ListOptions, error) {
	if l.format != "table" && l.format != "json" {
		return session.ListOptions{}, usagef("unknown --format %q (valid: table, json)", l.format)
	}
	var opts session.ListOptions
	switch {
	case l.here && l.cwd != "":
		return opts, usagef("--here and --cwd %s: pass one of them", l.cwd)
	case l.here:
		wd, err := os.Getwd()
		if err != nil {
			return opts, err
		}
		opts.Cwd = wd
	case l.cwd != "":
		abs, err := filepath.Abs(l.cwd)
		if err != nil {
			return opts, usagef("--cwd %s: %v", l.cwd, err)
		}
		opts.Cwd = abs
	}
	return opts, nil
}

// sessionJSON is one session as 'sessions list --format json' prints it.
type sessionJSON struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Cwd       string    `json:"cwd"`
	CreatedAt time.Time `json:"created_at"` // RFC 3339, UTC
	UpdatedAt time.Time `json:"updated_at"`
	Loops     int       `json:"loops"`
	Turns     int       `json:"turns"`
	Usage     llm.Usage `json:"usage"` // tokens, summed over the session's turns
	// Pings are the session's keep-alive pings (docs/keepalive.md): how
	// many, and their tokens, never in Usage.
	Pings pingsJSON `json:"keepalive_pings"`
	// TotalUsage is what the session cost: Usage plus the pings' usage.
	TotalUsage llm.Usage `json:"total_usage"`
}

// pingsJSON is session.PingTotals as 'sessions list --format json' prints it.
type pingsJSON struct {
	Count int       `json:"count"`
	Usage llm.Usage `json:"usage"` // tokens
}

// printSessionsJSON prints ss as one indented JSON array ([] when empty).
func printSessionsJSON(w io.Writer, ss []session.SessionSummary) error {
	out := make([]sessionJSON, 0, len(ss))
	for _, s := range ss {
		out = append(out, sessionJSON{ID: s.ID, Title: s.Title, Cwd: s.Cwd, CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(),
			Loops: s.Loops, Turns: s.Turns, Usage: s.Usage, Pings: pingsJSON{Count: s.Pings.Count, Usage: s.Pings.Usage},
			TotalUsage: s.Usage.Add(s.Pings.Usage)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
