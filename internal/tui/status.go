package tui

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/strata-agent/strata/llm"
)

// statusLine renders the status bar within width columns (0 = unlimited).
// The counts are never cut: when the full line is too wide, numbers switch
// to k/M form and the state to its short form, then the header is cut
// from its end (with "…"), then dropped; below ~67 columns the labels
// shorten ("cache r N w N") and only then is the line cut. Every character of the
// status is one column wide (ASCII and "·", "…").
func statusLine(header string, calls int, u llm.Usage, state, short string, width int) string {
	full := fmt.Sprintf("%s · %d call(s) · in %d out %d · cache read %d write %d · %s",
		header, calls, u.Input, u.Output, u.CacheRead, u.CacheWrite, state)
	if width <= 0 || cols(full) <= width {
		return full
	}
	counts := fmt.Sprintf("%d call(s) · in %s out %s · cache read %s write %s · %s",
		calls, count(u.Input), count(u.Output), count(u.CacheRead), count(u.CacheWrite), short)
	room := width - cols(counts) - len(" · ")
	switch {
	case room >= cols(header):
		return header + " · " + counts
	case room >= 2:
		return clipCols(header, room) + " · " + counts
	case cols(counts) <= width:
		return counts
	}
	tiny := fmt.Sprintf("%d calls · in %s out %s · cache r %s w %s · %s",
		calls, count(u.Input), count(u.Output), count(u.CacheRead), count(u.CacheWrite), short)
	return clipCols(tiny, width)
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
