package tui

import (
	"strings"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// The status bar fits the window: at 80 columns and below the counts stay
// whole (numbers in k/M form) and the header gives way; wide windows show
// everything as is.
func TestStatusLineFitsTheWidth(t *testing.T) {
	header := "layout cachefit · session 3596919342"
	big := llm.Usage{Input: 4_638_123, Output: 21_234, CacheRead: 3_912_345, CacheWrite: 612_345}
	for _, tc := range []struct {
		name        string
		u           llm.Usage
		state       string
		width       int
		want, avoid string
	}{
		{"wide shows all", big, "ready", 200, header + " · 12 call(s) · in 4638123 out 21234 · cache read 3912345 write 612345 · ready", ""},
		{"80 columns keeps the cache counts", big, "ready", 80, "12 call(s) · in 4.6M out 21.2k · cache read 3.9M write 612k · ready", "cache rea "},
		{"80 columns while running", big, "running (esc cancels)", 80, "cache read 3.9M write 612k · esc cancels", ""},
		{"120 columns keeps the header", llm.Usage{Input: 4638, Output: 212}, "ready", 120, header + " · 12 call(s) · in 4638 out 212 · cache read 0 write 0 · ready", ""},
		{"67 columns drops the header", big, "ready", 67, "12 call(s) · in 4.6M out 21.2k · cache read 3.9M write 612k · ready", "layout"},
		{"narrower shortens the labels", big, "ready", 60, "12 calls · in 4.6M out 21.2k · cache r 3.9M w 612k · ready", "layout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			short := tc.state
			if tc.state == "running (esc cancels)" {
				short = "esc cancels"
			}
			got := statusLine(header, 12, tc.u, tc.state, short, tc.width)
			if cols(got) > tc.width {
				t.Errorf("%d columns > width %d: %q", cols(got), tc.width, got)
			}
			if !strings.Contains(got, tc.want) || tc.avoid != "" && strings.Contains(got, tc.avoid) {
				t.Errorf("status = %q\nwant it to contain %q", got, tc.want)
			}
		})
	}
}

func TestCountFormsStayShort(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1.0k", 46_380: "46.4k", 612_345: "612k", 4_638_123: "4.6M", 123_456_789: "123M"} {
		if got := count(n); got != want || len(got) > 5 {
			t.Errorf("count(%d) = %q, want %q (≤ 5 columns)", n, got, want)
		}
	}
}

// A keep-alive ping's tokens count in the status bar's usage, but it is
// not a model call of the conversation.
func TestKeepAliveUsageCounts(t *testing.T) {
	m := New(nil, "h")
	u := llm.Usage{Input: 3, CacheRead: 2000, Output: 1}
	m.observe(event.Event{Kind: event.TurnEnd, Usage: &llm.Usage{Input: 10, Output: 5}})
	m.observe(event.Event{Kind: event.CacheKeepAlive, Usage: &u, Ping: 1})
	got, calls := m.Usage()
	if calls != 1 || got.CacheRead != 2000 || got.Input != 13 || got.Output != 6 {
		t.Errorf("usage %+v, %d calls; want the turn's and the ping's tokens, 1 call", got, calls)
	}
}
