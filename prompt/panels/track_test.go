package panels

import (
	"strings"
	"testing"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

const minute = int64(60_000)

// stamps returns each panel's timestamp text by id.
func stamps(req *llm.Request) map[string]string {
	out := map[string]string{}
	for _, m := range req.Messages {
		for _, u := range m.ToolUses() {
			if strings.HasPrefix(u.ID, "panel_P") {
				out[strings.TrimPrefix(u.ID, "panel_")] = m.Content[len(m.Content)-2].Text
			}
		}
	}
	return out
}

// Step 5 and 6 of the design: each item carries "last_refresh_ms:
// timestamp of last content change", and the panel says "Panel
// automatically generated at {iso_time}". A panel without a source time
// is dated by the request at which its content last changed, so an
// unchanged panel keeps its time and a changed one moves after the
// others ("sorted by last_refresh_ms ascending").
func TestRefreshTimesFromContentChanges(t *testing.T) {
	l := &Layout{}
	c := &prompt.Context{Now: t2026, FileTree: "a.go", Knowledge: "kb v1", History: []llm.Message{llm.UserText("hi")},
		Files: []prompt.File{{Path: "a.go", Content: "A", Refreshed: t2026 - 90*minute}}}
	r1 := mustAssemble(t, l, c)
	if s := stamps(r1); s["P5"] != "Panel automatically generated at 2026-02-19T14:00:00Z" ||
		s["P10"] != "Panel automatically generated at 2026-02-19T12:30:00Z" {
		t.Fatalf("first request: %q", s)
	}
	c.Now = t2026 + 5*minute
	if s := stamps(mustAssemble(t, l, c)); s["P5"] != "Panel automatically generated at 2026-02-19T14:00:00Z" {
		t.Errorf("unchanged panel re-dated: %q", s["P5"])
	}
	c.Now, c.Knowledge = t2026+10*minute, "kb v2"
	r3 := mustAssemble(t, l, c)
	if s := stamps(r3); s["P6"] != "Panel automatically generated at 2026-02-19T14:10:00Z" {
		t.Errorf("changed panel: %q", s["P6"])
	}
	got, _ := banners(r3)
	if got[len(got)-1] != "======= [P6] Memories =======" {
		t.Errorf("the changed panel should come last: %q", got)
	}
	// Before 2020 is "timestamp unknown" (Context Pilot's rule).
	if timestamp(0) != "Panel content (timestamp unknown - static or never refreshed)" {
		t.Error(timestamp(0))
	}
}

// The design's footer: "End of dynamic panel displays..." + message
// timestamps + current datetime; Context Pilot's template dates the last
// 25 messages as "  - [{id}] {role}: {iso_time} ({time_delta})".
func TestFooterDatesMessages(t *testing.T) {
	l := &Layout{}
	c := &prompt.Context{Now: t2026, Knowledge: "kb", History: []llm.Message{llm.UserText("hi")}}
	mustAssemble(t, l, c)
	c.Now = t2026 + 5*minute
	c.History = append(c.History, llm.AssistantText("hello"), llm.UserText("more"))
	req := mustAssemble(t, l, c)
	var footer string
	for _, m := range req.Messages {
		if u := m.ToolUses(); len(u) > 0 && u[0].ID == "panel_footer" {
			footer = m.Content[0].Text
		}
	}
	want := "End of dynamic panel displays. All content displayed above may be considered up to date: it is automatically kept updated as we speak.\n\n" +
		"Last message datetimes:\n" +
		"  - [1] user: 2026-02-19T14:00:00Z (5 minutes ago)\n" +
		"  - [2] assistant: 2026-02-19T14:05:00Z (just now)\n" +
		"  - [3] user: 2026-02-19T14:05:00Z (just now)\n" +
		"\nCurrent datetime: 2026-02-19T14:05:00Z"
	if footer != want {
		t.Errorf("footer:\n%s\nwant:\n%s", footer, want)
	}
}

func TestTimeDelta(t *testing.T) {
	for _, tc := range []struct {
		secs int64
		want string
	}{{0, "just now"}, {30, "30 seconds ago"}, {60, "1 minute ago"}, {150, "2 minutes ago"}, {3600, "1 hour ago"}, {7300, "2 hours ago"}} {
		if got := delta(t2026+tc.secs*1000, t2026); got != tc.want {
			t.Errorf("%ds: %q, want %q", tc.secs, got, tc.want)
		}
	}
}

// Step 7: "Each panel's content is hashed and compared to the previous
// tick's hash list via prefix matching. Panels whose hash matches the same
// position in the previous list are marked as cache hits. Per-panel costs
// are accumulated based on cache hit/miss token pricing for the current
// model."
func TestPanelCacheTrackingByPrefix(t *testing.T) {
	price, ok := cachesim.Lookup("claude-sonnet-4-5")
	if !ok {
		t.Fatal("no price for claude-sonnet-4-5")
	}
	l := &Layout{}
	c := full()
	track := func() []prompt.Span {
		_, bd := assemble(t, l, c)
		var out []prompt.Span
		for _, s := range bd.Spans {
			if s.Cache != nil {
				out = append(out, s)
			}
		}
		return out
	}
	first := track()
	for _, s := range first {
		if s.Cache.Hit || s.Cache.Cost != float64(s.Tokens)*price.Input/1e6 || len(s.Cache.Hash) != 16 {
			t.Errorf("first request %s: %+v", s.Name, s.Cache)
		}
	}
	c.Now += minute
	second := track()
	for i, s := range second {
		if !s.Cache.Hit || s.Cache.Cost != float64(s.Tokens)*price.CacheRead/1e6 || s.Cache.Total != first[i].Cache.Cost+s.Cache.Cost {
			t.Errorf("unchanged request %s: %+v", s.Name, s.Cache)
		}
	}
	// Change the tree (P5, the 5th panel): it moves last; the 4 panels
	// before it still hit, every panel from its old position on misses,
	// even those whose own bytes did not change (prefix matching).
	c.Now += minute
	c.FileTree = "a.go\nb.go\nc.go"
	third := track()
	for i, s := range third {
		if hit := i < 4; s.Cache.Hit != hit {
			t.Errorf("after changing the tree, panel %d (%s): hit=%v, want %v", i, s.Name, s.Cache.Hit, hit)
		}
	}
	if !strings.Contains(third[len(third)-1].Name, "Tree") {
		t.Errorf("the changed panel should be last: %s", third[len(third)-1].Name)
	}
}

// Step 2: old messages go into "a frozen ConversationHistory panel"; the
// panel table: "ConversationHistory | Frozen message chunks | Static
// after creation". Each detached chunk is its own panel, named by its
// messages' times as Context Pilot names history panels; a later chunk is
// a new panel and leaves the earlier ones' bytes alone.
func TestDetachedChunksAreFrozenHistoryPanels(t *testing.T) {
	l := &Layout{}
	u := func(s string) llm.Message { return llm.UserText(s) }
	a := func(s string) llm.Message { return llm.AssistantText(s) }
	c := &prompt.Context{Now: t2026, History: []llm.Message{u("q1"), a("a1")}}
	c.History = append(c.History, u("q2"))
	mustAssemble(t, l, c) // messages 1–3 first sent at 14:00
	c.Now = t2026 + 10*minute
	c.History = append(c.History, a("a2"), u("q3"))
	mustAssemble(t, l, c) // 4–5 at 14:10

	c.Now = t2026 + 20*minute
	d1 := prompt.Detached{First: 0, Last: 3, At: t2026 + 20*minute, Text: "chunk one"}
	c.Detached = []prompt.Detached{d1}
	c.Summary = prompt.JoinSummary("earlier summary", c.Detached)
	c.History = []llm.Message{u("q3"), a("a3"), u("q4")}
	r1 := mustAssemble(t, l, c)
	_, p1 := banners(r1)
	if p1["P10"] != "======= [P10] Conversation Summary =======\nearlier summary" {
		t.Errorf("summary panel must not carry the chunks: %q", p1["P10"])
	}
	if p1["P11"] != "======= [P11] Chat 14:00–14:10 =======\nchunk one" {
		t.Errorf("history panel: %q", p1["P11"])
	}
	if s := stamps(r1); s["P11"] != "Panel automatically generated at 2026-02-19T14:20:00Z" {
		t.Errorf("history panel time: %q", s["P11"])
	}

	c.Now = t2026 + 30*minute
	d2 := prompt.Detached{First: 4, Last: 6, At: t2026 + 30*minute, Text: "chunk two"}
	c.Detached = append(c.Detached, d2)
	c.Summary = prompt.JoinSummary("earlier summary", c.Detached)
	c.History = []llm.Message{u("q5")}
	r2 := mustAssemble(t, l, c)
	got, p2 := banners(r2)
	if p2["P11"] != p1["P11"] || p2["P10"] != p1["P10"] {
		t.Errorf("earlier panels changed: %q", got)
	}
	if !strings.HasPrefix(p2["P12"], "======= [P12] Chat ") || !strings.HasSuffix(p2["P12"], "\nchunk two") {
		t.Errorf("second history panel: %q", p2["P12"])
	}
	if got[len(got)-2] != "======= [P11] Chat 14:00–14:10 =======" || got[len(got)-1] != strings.SplitN(p2["P12"], "\n", 2)[0] {
		t.Errorf("history panels stack in detach order, last: %q", got)
	}
	// A layout that never saw the messages names a chunk by its size.
	_, fresh := banners(mustAssemble(t, &Layout{}, c))
	if fresh["P11"] != "======= [P11] Chat (4) =======\nchunk one" {
		t.Errorf("fresh layout: %q", fresh["P11"])
	}
}
