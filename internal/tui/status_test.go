package tui

import (
	"strings"
	"testing"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// The status bar fits the window (docs/cli.md, "chat"): wide windows show
// everything; at 80 columns and below fields shorten and the least useful
// drop (layout, provider, token details), but the offline marker, the
// session id, the cost and the state stay.
func TestStatusLineFitsTheWidth(t *testing.T) {
	info := Info{Provider: "anthropic", Model: "claude-sonnet-4-5-20250929", Layout: "cachefit", Session: "3596919342abcdef",
		Offline: true, Context: 41_000, Window: 200_000, CostUSD: 0.01234, Priced: true}
	big := llm.Usage{Input: 4_638_123, Output: 21_234, CacheRead: 3_912_345, CacheWrite: 612_345}
	for _, tc := range []struct {
		name        string
		in          Info
		state       string
		width       int
		want, avoid []string
	}{
		{"wide shows all", info, "ready", 250, []string{"OFFLINE demo · anthropic · claude-sonnet-4-5-20250929 · layout cachefit · session 35969193 · 12 call(s) · in 4638123 out 21234 · cache read 3912345 write 612345 · ctx 20% of 200k · $0.0123 · ready"}, nil},
		{"120 columns", info, "ready", 120, []string{"offline", "35969193", "cache r 3.9M w 612k", "ctx 20%", "$0.0123", "ready"}, []string{"layout"}},
		{"80 columns keeps session, cost and state", info, "running (esc cancels)", 80, []string{"offline · claude-sonnet… · session 35969193 · ctx 20% · $0.0123 · esc cancels"}, []string{"layout", "anthropic"}},
		{"unknown price", Info{Model: "m-x", Session: "abc"}, "ready", 80, []string{"m-x · session abc", "unknown price · ready"}, nil},
		{"no context before the first call", Info{Model: "m", Priced: true}, "ready", 80, []string{"$0.0000"}, []string{"ctx"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			short := tc.state
			if tc.state == "running (esc cancels)" {
				short = "esc cancels"
			}
			got := statusLine(tc.in, 12, big, tc.state, short, tc.width)
			if cols(got) > tc.width {
				t.Errorf("%d columns > width %d: %q", cols(got), tc.width, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("status = %q\nwant it to contain %q", got, w)
				}
			}
			for _, a := range tc.avoid {
				if strings.Contains(got, a) {
					t.Errorf("status = %q\nwant no %q", got, a)
				}
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
