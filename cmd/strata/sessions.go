package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/session"
)

func init() { register(newSessionsCmd) }

func newSessionsCmd() *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, resume and branch the recorded sessions",
		Long: `Every 'strata run' is recorded in a SQLite database ($STRATA_DATA_DIR/strata.db,
else $XDG_DATA_HOME/strata/strata.db, else ~/.local/share/strata/strata.db; --store
overrides, and takes a PostgreSQL database as postgres://…): sessions, their loops, turns (trigger, stop reason, usage incl. cache
read/write tokens) and messages, one transaction per completed step.`,
	}
	addStoreFlags(cmd.PersistentFlags(), &db)
	var lf listFlags
	list := &cobra.Command{
		Use:   "list",
		Short: "List sessions, newest first (--here: those run in this directory)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := lf.options()
			if err != nil {
				return err
			}
			st, err := openStore(db)
			if err != nil {
				return err
			}
			defer st.Close()
			return listSessions(cmd.Context(), os.Stdout, st, opts, lf.format)
		},
	}
	lf.add(list)
	var showFormat string
	var full bool
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session's loops, turns (usage and cache figures) and messages",
		Long: `Show a session's loops, turns (usage and cache figures) and messages. Text
output shows each content block on one line, cut at 80 characters; --full
shows each block's whole text under its line. --format json prints the whole
stored session as one JSON object (loops, turns, messages with every
content block in full, keep-alive pings).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if showFormat != "text" && showFormat != "json" {
				return usagef("unknown --format %q (valid: text, json)", showFormat)
			}
			st, err := openStore(db)
			if err != nil {
				return err
			}
			defer st.Close()
			return showSession(cmd.Context(), os.Stdout, st, args[0], showFormat, full)
		},
	}
	show.Flags().StringVar(&showFormat, "format", "text", "output: text or json (the whole session, messages in full)")
	show.Flags().BoolVar(&full, "full", false, "text output: each content block's whole text, not its first 80 characters")
	cmd.AddCommand(list, show, newResumeCmd(&db), newBranchCmd(&db))
	return cmd
}

func newResumeCmd(db *string) *cobra.Command {
	var f runFlags
	var rerun bool
	cmd := &cobra.Command{
		Use:   "resume ID [PROMPT...]",
		Short: "Continue a session from its last completed step (resolving the tool calls a crash cut off), then PROMPT if given",
		Long: `Continue a session from its last completed step, then run PROMPT if given.

Tool calls a crash cut off are resolved first. Calls run one at a time, so only
the first call without a result may have been running: unless it is read-only
(fs_read, grep, glob, thinking, introspect, knowledge) it is not run again, and the model gets an error result
saying it was interrupted and may have partly run (at-most-once); the
side-effecting calls after it, which never started, are not run either.
--rerun-interrupted runs them all again instead (their effects may happen twice).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkSessionArg(args[0]); err != nil {
				return err
			}
			f.db, f.session = cmp.Or(f.db, *db), args[0] // its own --store, else the parent's
			text := strings.Join(args[1:], " ")
			return drive(cmd.Context(), f, func(ctx context.Context, s *strata.Session) (*agent.Result, error) {
				if n := len(s.Pending()); n > 0 && !rerun {
					fmt.Fprintf(os.Stderr, "strata: session %s has %d tool call(s) a crash cut off; a side-effecting call that may have been "+
						"running is reported to the model as interrupted, not run again (--rerun-interrupted runs it again)\n", s.ID(), n)
				}
				res, err := s.ResumePendingWith(ctx, agent.ResumeOptions{RerunInterrupted: rerun})
				if err != nil || text == "" {
					if res == nil && err == nil {
						fmt.Fprintf(os.Stderr, "strata: session %s has nothing to resume: its last step completed "+
							"(to go on, give a prompt: strata sessions resume %s PROMPT)\n", s.ID(), s.ID())
					}
					return res, err
				}
				return s.Prompt(ctx, text)
			})
		},
	}
	addRunFlags(cmd, &f)
	cmd.Flags().BoolVar(&rerun, "rerun-interrupted", false, "run the tool calls a crash cut off again, the one that may have been running included")
	return cmd
}

func newBranchCmd(db *string) *cobra.Command {
	var f runFlags
	var turn string
	cmd := &cobra.Command{
		Use:   "branch ID --turn N|LOOP:INDEX PROMPT...",
		Short: "Start a new loop from a session's conversation up to turn N, and run PROMPT in it",
		Long: `Start a new loop from a session's conversation up to and including one turn, and run
PROMPT in it: the new loop's first turn is its turn 0, with trigger "branch".

Each prompt of a session is a loop of its own, its turns indexed from 0. --turn N
counts the turns of the session's latest conversation from 0 across its loops,
the numbers in the N column of 'strata sessions show' (the turn numbers a session
had when one session was one loop). --turn LOOP:INDEX names turn INDEX of loop
LOOP (a unique prefix works) instead, any loop of the session, as listed by
'strata sessions show'. The turn must have completed.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkSessionArg(args[0]); err != nil {
				return err
			}
			loop, n, err := parseBranchTurn(turn)
			if err != nil {
				return usagef("--turn %q: %v (see 'strata sessions show %s')", turn, err, args[0])
			}
			f.db = cmp.Or(f.db, *db) // its own --store, else the parent's
			text := strings.Join(args[1:], " ")
			return driveTarget(cmd.Context(), f, target{session: args[0], branchFrom: n, branchLoop: loop},
				func(ctx context.Context, s *strata.Session) (*agent.Result, error) { return s.Prompt(ctx, text) })
		},
	}
	addRunFlags(cmd, &f)
	cmd.Flags().StringVar(&turn, "turn", "", "turn to branch after: N across the conversation, or LOOP:INDEX (required)")
	return cmd
}

// checkSessionArg refuses an empty session ID argument (resume and branch
// of "" would otherwise start a new session, e.g. from an unset $ID).
func checkSessionArg(id string) error {
	if strings.TrimSpace(id) == "" {
		return usagef("the session ID is empty (see 'strata sessions list')")
	}
	return nil
}

// parseBranchTurn reads --turn: "N" (loop "") or "LOOP:INDEX".
func parseBranchTurn(s string) (loop string, n int, err error) {
	num := s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		loop, num = s[:i], s[i+1:]
		if loop == "" {
			return "", 0, errors.New("empty loop id before ':'")
		}
	}
	n, err = strconv.Atoi(num)
	if err != nil || n < 0 {
		return "", 0, errors.New("want N or LOOP:INDEX, N and INDEX the number of a completed turn (≥ 0)")
	}
	return loop, n, nil
}

func listSessions(ctx context.Context, w io.Writer, st session.Store, opts session.ListOptions, format string) error {
	ss, err := st.ListSessions(ctx, opts)
	if err != nil {
		return err
	}
	if format == "json" {
		return printSessionsJSON(w, ss)
	}
	// The token columns are what the session cost: its turns' and its
	// keep-alive pings' (docs/keepalive.md); PINGS says how many pings.
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tLOOPS\tTURNS\tPINGS\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tTITLE")
	for _, s := range ss {
		u := s.Usage.Add(s.Pings.Usage)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", s.ID, s.UpdatedAt.Local().Format(time.DateTime), s.Loops, s.Turns,
			s.Pings.Count, u.Input, u.Output, u.CacheRead, u.CacheWrite, clip(s.Title, 50))
	}
	return tw.Flush()
}

func showSession(ctx context.Context, w io.Writer, st session.Store, id, format string, full bool) error {
	d, err := st.LoadSession(ctx, id)
	switch {
	case errors.Is(err, session.ErrNotFound):
		return usagef("session %q: not found in the session database (see 'strata sessions list')", id)
	case errors.Is(err, session.ErrAmbiguous):
		return usagef("session %q: %v: give more of the id (see 'strata sessions list')", id, session.ErrAmbiguous)
	case err != nil:
		return err
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	}
	fmt.Fprintf(w, "session %s  %q\ncreated %s · cwd %s · provider %s · model %s · layout %s\n\n", d.ID, d.Title,
		d.CreatedAt.Local().Format(time.DateTime), d.Cwd, d.Provider, d.Model, d.Layout)
	for _, l := range d.Loops {
		fmt.Fprintf(w, "loop %s (trigger %s", l.ID, l.Trigger)
		if l.ParentLoopID != "" {
			fmt.Fprintf(w, ", sub-agent of %s", l.ParentLoopID)
		}
		if l.BranchedFromLoop != "" {
			fmt.Fprintf(w, ", branched from %s turn %d", l.BranchedFromLoop, l.BranchedFromTurn)
		} else if l.PreviousLoopID != "" {
			fmt.Fprintf(w, ", after %s", l.PreviousLoopID)
		}
		fmt.Fprintln(w, ")")
	}
	fmt.Fprintln(w)
	numbers, err := conversationNumbers(ctx, st, d.ID)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "N\tLOOP\tTURN\tTRIGGER\tSTATUS\tSTOP\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tTOTAL\tERROR")
	for _, t := range d.Turns {
		u := t.Usage
		n := "-"
		if i, ok := numbers[session.TurnRef{LoopID: t.LoopID, Index: t.Index}]; ok {
			n = strconv.Itoa(i)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", n, t.LoopID, t.Index, t.TriggeredBy, t.Status, t.StopReason,
			u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Total, clip(t.Error, 40))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := showUsage(w, d); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, m := range d.Messages {
		for _, b := range m.Content {
			if !full {
				fmt.Fprintf(w, "%s #%d.%d turn %d %-12s %-11s %s\n", m.LoopID, m.Seq, m.Part, m.TurnIndex, m.Kind, b.Type, clip(blockText(b), 80))
				continue
			}
			fmt.Fprintf(w, "%s #%d.%d turn %d %-12s %s\n", m.LoopID, m.Seq, m.Part, m.TurnIndex, m.Kind, b.Type)
			fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(strings.TrimRight(fullText(b), "\n"), "\n", "\n    "))
		}
	}
	return nil
}

// showUsage prints what the session cost: its turns' usage (the model
// calls of the conversation), its keep-alive pings' apart (count and
// tokens: docs/keepalive.md; never turns) and their sum.
func showUsage(w io.Writer, d *session.SessionDetail) error {
	var turns llm.Usage
	for _, t := range d.Turns {
		turns = turns.Add(t.Usage)
	}
	pings := d.PingTotals()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "USAGE\tCOUNT\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tTOTAL")
	row := func(what string, n int, u llm.Usage) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\n", what, n, u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Total)
	}
	row("turns", len(d.Turns), turns)
	row("keep-alive pings", pings.Count, pings.Usage)
	row("session", len(d.Turns)+pings.Count, turns.Add(pings.Usage))
	return tw.Flush()
}

// conversationNumbers returns the number of each turn of the session's
// latest conversation (session.LoopRecord.Numbered: what 'sessions branch
// --turn N' counts); a session without a loop has none.
func conversationNumbers(ctx context.Context, st session.Store, id string) (map[session.TurnRef]int, error) {
	out := map[session.TurnRef]int{}
	latest, err := st.LatestLoop(ctx, id)
	if errors.Is(err, session.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	rec, err := st.ReadLoop(ctx, latest)
	if err != nil {
		return nil, err
	}
	for i, r := range rec.Numbered() {
		out[r] = i
	}
	return out, nil
}

func blockText(b llm.Block) string {
	switch {
	case b.Name != "":
		return b.Name + " " + string(b.Input)
	case b.Type == llm.BlockToolResult && len(b.Content) > 0:
		return b.ID + ": " + b.Content[0].Text
	}
	return b.Text
}

// fullText is a block's whole text: a tool call's name and input, every
// text of a tool result, else its text.
func fullText(b llm.Block) string {
	if b.Type != llm.BlockToolResult {
		return blockText(b)
	}
	parts := []string{b.ID + ":"}
	for _, c := range b.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
