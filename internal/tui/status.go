package tui

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/strata-agent/strata/llm"
)

// Info is what the status bar says about the session besides the
// screen's own counts (SetInfo; docs/cli.md, "chat").
type Info struct {
	Provider, Model, Layout string
	Session                 string // the session id; the bar shows its first 8 characters
	Offline                 bool   // the offline demo answers (no API key)
	Context                 int64  // tokens the conversation holds after the last model call; 0 = none yet
	Window                  int64  // the model's context window in tokens; 0 = unknown
	CostUSD                 float64
	Priced                  bool       // CostUSD is known (the model is in the price table)
	Usage                   *llm.Usage // the session's tokens (stored calls of a resumed session too); nil = the screen's own count
}

// segment is one field of the status bar: its full and short forms, and
// its rank (the field with the highest rank is dropped first when the bar
// is too wide; rank 0 is never dropped).
type segment struct {
	full, short string
	rank        int
}

// statusLine renders the status bar within width columns (0 = unlimited).
// Fields switch to their short forms first, then drop in rank order
// (layout, provider, token details, cache counts, …); the session id, the
// cost and the state stay at any width down to 80 columns, and below
// that the line is cut. Every character of the status is one column wide
// (ASCII and "·", "…", "%").
func statusLine(in Info, calls int, u llm.Usage, state, short string, width int) string {
	segs := []segment{
		{"OFFLINE demo", "offline", 0},
		{in.Provider, "", 6},
		{in.Model, clipCols(in.Model, 14), 2},
		{"layout " + in.Layout, "", 7},
		{"session " + first8(in.Session), "", 0},
		{fmt.Sprintf("%d call(s)", calls), fmt.Sprintf("%d calls", calls), 4},
		{fmt.Sprintf("in %d out %d", u.Input, u.Output), fmt.Sprintf("in %s out %s", count(u.Input), count(u.Output)), 5},
		{fmt.Sprintf("cache read %d write %d", u.CacheRead, u.CacheWrite), fmt.Sprintf("cache r %s w %s", count(u.CacheRead), count(u.CacheWrite)), 4},
		{contextUse(in.Context, in.Window), shortContextUse(in.Context, in.Window), 3},
		{cost(in), "", 0},
		{state, short, 0},
	}
	if !in.Offline {
		segs[0] = segment{}
	}
	if in.Layout == "" {
		segs[3] = segment{}
	}
	if in.Session == "" {
		segs[4] = segment{}
	}
	join := func(shortForm bool) string {
		var parts []string
		for _, s := range segs {
			t := s.full
			if shortForm && s.short != "" {
				t = s.short
			}
			if t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, " · ")
	}
	line := join(false)
	if width <= 0 || cols(line) <= width {
		return line
	}
	for rank := 8; ; rank-- {
		if line = join(true); cols(line) <= width || rank == 0 {
			break
		}
		for i := range segs {
			if segs[i].rank == rank {
				segs[i] = segment{}
			}
		}
	}
	return clipCols(line, width)
}

// first8 is the first 8 characters of a session id (enough to tell
// sessions apart; `strata sessions` takes any unique prefix).
func first8(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// contextUse is the conversation's share of the context window: "ctx 12%
// of 200k", "ctx 5.1k" when the window is unknown, "" before the first
// model call.
func contextUse(n, window int64) string {
	switch {
	case n == 0:
		return ""
	case window <= 0:
		return "ctx " + count(n)
	}
	return fmt.Sprintf("ctx %d%% of %s", n*100/window, count(window))
}

// shortContextUse is contextUse without the window's size.
func shortContextUse(n, window int64) string {
	if n == 0 || window <= 0 {
		return ""
	}
	return fmt.Sprintf("ctx %d%%", n*100/window)
}

// cost is the session's cost in USD, or "unknown price" when the price
// table has no row for the model.
func cost(in Info) string {
	if !in.Priced {
		if in.Model == "" {
			return ""
		}
		return "unknown price"
	}
	return USD(in.CostUSD)
}

// USD renders a cost in dollars: 4 decimals below $1 (a turn often costs
// fractions of a cent), else 2.
func USD(v float64) string {
	if v < 1 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

// count renders a token count in at most 5 columns: 999, 12.3k, 4.6M.
func count(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 100_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	case n < 100_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%dM", n/1_000_000)
}

func cols(s string) int { return utf8.RuneCountInString(s) }

// clipCols cuts s to n columns, the last being "…".
func clipCols(s string, n int) string {
	if cols(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ·") + "…"
}
