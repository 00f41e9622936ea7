package cachesim

import (
	"math"
	"strings"
	"testing"
)

func TestPriceTable(t *testing.T) {
	tab, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Models) < 25 || tab.Note == "" {
		t.Fatalf("table has %d rows, note %q", len(tab.Models), tab.Note)
	}
	// Every model family the brief names is present.
	for _, id := range []string{
		"claude-sonnet-4-5", "claude-sonnet-4", "claude-opus-4-1", "claude-opus-4-5", "claude-haiku-4-5", "claude-3-5-haiku",
		"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-5", "gpt-5-mini", "o3", "o4-mini",
		"gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-pro-preview", "google/gemini-3-pro-preview",
		"deepseek-chat", "deepseek-reasoner",
		"claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4.5", "anthropic.claude-sonnet-4-5-20250929-v1:0",
		"gpt-4o-2024-08-06", "GPT-4.1",
	} {
		if _, ok := tab.Lookup(id); !ok {
			t.Errorf("Lookup(%q) failed", id)
		}
	}
	if _, ok := Lookup("no-such-model"); ok {
		t.Error("unknown model found")
	}
	// Anthropic multipliers: read 0.1×, write 1.25× (5 m) and 2× (1 h).
	for _, p := range tab.Models {
		if p.Provider != "anthropic" {
			if p.CacheWrite5m != p.Input || p.CacheWrite1h != 0 {
				t.Errorf("%s: automatic caches have no write fee and no 1h write", p.ID)
			}
			continue
		}
		if p.ID == "claude-3-haiku" {
			continue // the page lists rounded cache prices for Haiku 3
		}
		for name, pair := range map[string][2]float64{
			"read": {p.CacheRead, 0.1}, "write5m": {p.CacheWrite5m, 1.25}, "write1h": {p.CacheWrite1h, 2},
		} {
			if math.Abs(pair[0]-pair[1]*p.Input) > 1e-9 {
				t.Errorf("%s: %s = %v, want %v× input %v", p.ID, name, pair[0], pair[1], p.Input)
			}
		}
	}
}

func TestCost(t *testing.T) {
	r := Result{Input: 1_000_000, CacheRead: 2_000_000, CacheWrite: 3_000_000, CacheWrite5m: 2_000_000, CacheWrite1h: 1_000_000, Output: 1_000_000}
	got, err := Cost("claude-sonnet-4-5", r)
	if err != nil {
		t.Fatal(err)
	}
	// 3 + 2·0.30 + 2·3.75 + 1·6 + 15 = 32.1
	if math.Abs(got-32.1) > 1e-9 {
		t.Errorf("cost = %v, want 32.1", got)
	}
	// Gemini 3 Pro: the per-call cost recorded in a train trajectory
	// (prompt 6131, cached 4058, completion → prompt cost 0.0049576 USD).
	p, _ := Lookup("gemini-3-pro-preview")
	if c := p.Cost(Result{Input: 6131 - 4058, CacheRead: 4058}); math.Abs(c-0.0049576) > 1e-12 {
		t.Errorf("gemini prompt cost = %v, want 0.0049576", c)
	}
	if _, err := Cost("nope", r); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown model error = %v", err)
	}
}

func TestParseTableErrors(t *testing.T) {
	for _, bad := range []string{
		`{`,
		`{"models":[{"id":"x","provider":"acme","input":1,"output":1,"cache_write_5m":1,"cache_ttl_seconds":1,"price_source":"https://a","price_read":"2026-01-01","cache_rules_source":"https://a","cache_rules_read":"2026-01-01"}]}`,
		`{"models":[{"id":"x","provider":"openai","input":1,"output":1,"cache_write_5m":1,"cache_ttl_seconds":1,"price_source":"","price_read":"2026-01-01","cache_rules_source":"https://a","cache_rules_read":"2026-01-01"}]}`,
		`{"models":[{"id":"x","provider":"openai","input":1,"output":1,"cache_read":2,"cache_write_5m":1,"cache_ttl_seconds":1,"price_source":"https://a","price_read":"2026-01-01","cache_rules_source":"https://a","cache_rules_read":"2026-01-01"}]}`,
	} {
		if _, err := ParseTable([]byte(bad)); err == nil {
			t.Errorf("ParseTable(%.60s…) succeeded", bad)
		}
	}
	var nilTab *Table
	if _, ok := nilTab.Lookup("gpt-4o"); ok {
		t.Error("nil table lookup")
	}
}

// Every model of the price table has a context window from its provider's
// docs (the values below copied from those pages: Anthropic's models
// overview, OpenAI's model pages, Gemini's models page, DeepSeek's pricing
// page); an alias with another window has its own (docs/loop.md,
// "compaction").
func TestEveryModelHasAContextWindow(t *testing.T) {
	tab, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tab.Models {
		if p.ContextWindow <= 0 || p.ContextWindowSource == "" {
			t.Errorf("%s: no context window", p.ID)
		}
	}
	for id, want := range map[string]int64{
		"claude-sonnet-4-5": 200000, "us.anthropic.claude-sonnet-4-5-20250929-v1:0": 200000, "claude-3-haiku": 200000,
		"gpt-4o": 128000, "gpt-4.1-mini": 1047576, "gpt-5": 400000, "gpt-5-chat-latest": 128000, "gpt-5.1-codex": 400000,
		"o3": 200000, "gemini-2.5-pro": 1048576, "google/gemini-3-pro-preview": 1048576, "deepseek-reasoner": 128000,
	} {
		p, ok := Lookup(id)
		if got := p.Window(id); !ok || got != want {
			t.Errorf("window of %s = %d (found %v), want %d", id, got, ok, want)
		}
	}
	for _, bad := range []string{
		`{"models":[{"id":"x","provider":"openai","input":1,"output":1,"cache_write_5m":1,"cache_ttl_seconds":1,"price_source":"https://a","price_read":"2026-01-01","cache_rules_source":"https://a","cache_rules_read":"2026-01-01"}]}`,
		`{"models":[{"id":"x","provider":"openai","input":1,"output":1,"cache_write_5m":1,"cache_ttl_seconds":1,"price_source":"https://a","price_read":"2026-01-01","cache_rules_source":"https://a","cache_rules_read":"2026-01-01","context_window":5,"context_window_source":"https://a","context_window_read":"2026-01-01","alias_context_windows":{"y":3}}]}`,
	} {
		if _, err := ParseTable([]byte(bad)); err == nil || !strings.Contains(err.Error(), "context_window") {
			t.Errorf("ParseTable(%.60s…): %v", bad, err)
		}
	}
}
