package cachesim

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

//go:embed prices.json
var pricesJSON []byte

// Price is one model's row of the price table. Prices are USD per million
// tokens (MTok).
type Price struct {
	// ID is the canonical model id, e.g. "claude-sonnet-4-5", "gpt-4.1",
	// "gemini-3-pro-preview".
	ID string `json:"id"`
	// Provider names the simulator family: "anthropic", "bedrock", "openai",
	// "gemini" or "deepseek".
	Provider string `json:"provider"`
	// Aliases are other ids that name the same model (dated snapshots,
	// OpenRouter ids, Bedrock ids). Lookup also normalises ids (see Lookup).
	Aliases []string `json:"aliases,omitempty"`

	Input        float64 `json:"input"`          // USD/MTok, uncached input
	Output       float64 `json:"output"`         // USD/MTok, output (reasoning included)
	CacheRead    float64 `json:"cache_read"`     // USD/MTok, cache hit
	CacheWrite5m float64 `json:"cache_write_5m"` // USD/MTok, cache write, 5-minute TTL (= Input where writes are free)
	CacheWrite1h float64 `json:"cache_write_1h"` // USD/MTok, cache write, 1-hour TTL; 0 = not offered

	// MinCacheableTokens is the shortest prefix (tokens) the provider caches.
	MinCacheableTokens int64 `json:"min_cacheable_tokens"`
	// CacheGranularityTokens is the step in which automatic caches count
	// cached tokens (OpenAI 128); 0 = any length (explicit breakpoints).
	CacheGranularityTokens int64 `json:"cache_granularity_tokens,omitempty"`
	// CacheTTLSeconds is the default cache lifetime in seconds (idle TTL for
	// automatic caches, the 5-minute default for breakpoints).
	CacheTTLSeconds int64 `json:"cache_ttl_seconds"`

	// PriceSource is the provider pricing page every price of the row was
	// taken from; PriceRead the date (YYYY-MM-DD) the values were read.
	PriceSource string `json:"price_source"`
	PriceRead   string `json:"price_read"`
	// CacheRulesSource is the page the minimum, granularity and TTL come
	// from; CacheRulesRead its date.
	CacheRulesSource string `json:"cache_rules_source"`
	CacheRulesRead   string `json:"cache_rules_read"`
	// ContextWindow is the model's context window in tokens (what the
	// provider allows for input plus output, or its input limit where it
	// gives one), from ContextWindowSource, read on ContextWindowRead
	// (YYYY-MM-DD). The agent loop compacts a request that would exceed it
	// (docs/loop.md, "compaction"; Price.Window).
	ContextWindow       int64  `json:"context_window"`
	ContextWindowSource string `json:"context_window_source"`
	ContextWindowRead   string `json:"context_window_read"`
	// AliasContextWindows are the windows of aliases that differ from
	// ContextWindow (OpenAI's "-chat-latest" snapshots: 128,000 tokens).
	AliasContextWindows map[string]int64 `json:"alias_context_windows,omitempty"`
	// Notes records assumptions and caveats (long-context tiers, regional
	// surcharges, inferred values).
	Notes string `json:"notes,omitempty"`
}

// Window returns the context window in tokens of model, an id p was
// looked up by: its AliasContextWindows entry, else ContextWindow.
func (p Price) Window(model string) int64 {
	k := normalize(model)
	for alias, w := range p.AliasContextWindows {
		if normalize(alias) == k {
			return w
		}
	}
	return p.ContextWindow
}

// TTL returns CacheTTLSeconds as a duration (TTL5m when unset).
func (p Price) TTL() time.Duration {
	if p.CacheTTLSeconds <= 0 {
		return TTL5m
	}
	return time.Duration(p.CacheTTLSeconds) * time.Second
}

// Cost returns the USD cost of r at p's prices:
// (Input·in + CacheRead·read + CacheWrite5m·w5m + CacheWrite1h·w1h +
// Output·out) / 1e6. 1 h writes on a model without a 1 h price are charged at
// the 5 m write price.
func (p Price) Cost(r Result) float64 {
	w1h := p.CacheWrite1h
	if w1h == 0 {
		w1h = p.CacheWrite5m
	}
	// A Result built by hand may leave the TTL split empty: charge the
	// unsplit remainder at the 5 m price.
	w5 := r.CacheWrite - r.CacheWrite1h
	if w5 < 0 {
		w5 = 0
	}
	return (float64(r.Input)*p.Input + float64(r.CacheRead)*p.CacheRead +
		float64(w5)*p.CacheWrite5m + float64(r.CacheWrite1h)*w1h +
		float64(r.Output)*p.Output) / 1e6
}

// Table is a price table: the embedded prices.json (Default) or one parsed
// with ParseTable.
type Table struct {
	// Note is the table's provenance note (how and when it was compiled).
	Note string `json:"note"`
	// Models are the rows in file order.
	Models []Price `json:"models"`
	byID   map[string]int
}

// ParseTable parses a price table in the prices.json shape
// ({"models":[Price…]}) and checks every row: id, known provider, prices ≥ 0,
// cache read ≤ input ≤ cache write, a source URL and a YYYY-MM-DD date for the
// prices, for the cache rules and for the context window (> 0). Errors name the row ("models[3] (gpt-4o)").
func ParseTable(data []byte) (*Table, error) {
	var t Table
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("cachesim: price table: %w", err)
	}
	t.byID = map[string]int{}
	for i, p := range t.Models {
		where := fmt.Sprintf("models[%d] (%s)", i, p.ID)
		if err := p.check(); err != nil {
			return nil, fmt.Errorf("cachesim: price table %s: %w", where, err)
		}
		for _, id := range append([]string{p.ID}, p.Aliases...) {
			k := normalize(id)
			if j, dup := t.byID[k]; dup && j != i {
				return nil, fmt.Errorf("cachesim: price table %s: id %q already names models[%d]", where, id, j)
			}
			t.byID[k] = i
		}
	}
	return &t, nil
}

var dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

func (p Price) check() error {
	switch {
	case p.ID == "":
		return fmt.Errorf("empty id")
	case p.Provider != "anthropic" && p.Provider != "bedrock" && p.Provider != "openai" &&
		p.Provider != "gemini" && p.Provider != "deepseek":
		return fmt.Errorf("provider %q: want anthropic, bedrock, openai, gemini or deepseek", p.Provider)
	case p.Input <= 0 || p.Output <= 0 || p.CacheRead < 0 || p.CacheWrite5m < 0 || p.CacheWrite1h < 0:
		return fmt.Errorf("prices must be positive (input, output) or ≥ 0 (cache)")
	case p.CacheRead > p.Input || p.CacheWrite5m < p.Input || (p.CacheWrite1h != 0 && p.CacheWrite1h < p.CacheWrite5m):
		return fmt.Errorf("want cache_read ≤ input ≤ cache_write_5m ≤ cache_write_1h")
	case p.MinCacheableTokens < 0 || p.CacheGranularityTokens < 0 || p.CacheTTLSeconds <= 0:
		return fmt.Errorf("min_cacheable_tokens, cache_granularity_tokens must be ≥ 0 and cache_ttl_seconds > 0")
	case !strings.HasPrefix(p.PriceSource, "https://") || !strings.HasPrefix(p.CacheRulesSource, "https://"):
		return fmt.Errorf("price_source and cache_rules_source must be https URLs")
	case !dateRE.MatchString(p.PriceRead) || !dateRE.MatchString(p.CacheRulesRead):
		return fmt.Errorf("price_read and cache_rules_read must be YYYY-MM-DD")
	case p.ContextWindow <= 0 || !strings.HasPrefix(p.ContextWindowSource, "https://") || !dateRE.MatchString(p.ContextWindowRead):
		return fmt.Errorf("context_window %d: want a window > 0 tokens with an https context_window_source and a YYYY-MM-DD context_window_read", p.ContextWindow)
	}
	for alias, w := range p.AliasContextWindows {
		if w <= 0 || !slices.ContainsFunc(p.Aliases, func(a string) bool { return normalize(a) == normalize(alias) }) {
			return fmt.Errorf("alias_context_windows %q: %d: want an alias of the row and a window > 0", alias, w)
		}
	}
	return nil
}

var (
	defaultOnce  sync.Once
	defaultTable *Table
	defaultErr   error
)

// Default returns the embedded price table (prices.json). The error is only
// non-nil if the embedded file is invalid, which the package tests rule out.
func Default() (*Table, error) {
	defaultOnce.Do(func() { defaultTable, defaultErr = ParseTable(pricesJSON) })
	return defaultTable, defaultErr
}

// Lookup finds a model by id or alias. Ids are normalised first: lower case;
// a vendor prefix ("anthropic/", "google/", "openai/", "deepseek/",
// "models/"), a Bedrock region and vendor prefix ("us.anthropic.") and
// version suffix ("-v1:0"), and a date suffix ("-20250929", "-2024-08-06")
// are removed; dots become dashes (so "claude-sonnet-4.5" finds
// "claude-sonnet-4-5").
func (t *Table) Lookup(model string) (Price, bool) {
	if t == nil {
		return Price{}, false
	}
	i, ok := t.byID[normalize(model)]
	if !ok {
		return Price{}, false
	}
	return t.Models[i], true
}

// Lookup finds a model in the Default table (see Table.Lookup).
func Lookup(model string) (Price, bool) {
	t, err := Default()
	if err != nil {
		return Price{}, false
	}
	return t.Lookup(model)
}

// Cost returns the USD cost of r for the model, priced from the Default
// table. The error names an unknown model.
func Cost(model string, r Result) (float64, error) {
	p, ok := Lookup(model)
	if !ok {
		return 0, fmt.Errorf("cachesim: no price for model %q", model)
	}
	return p.Cost(r), nil
}

var (
	regionRE  = regexp.MustCompile(`^(us|eu|apac|au|jp|ca|global|us-gov)\.`)
	bedrockRE = regexp.MustCompile(`-v\d+(:\d+)?$`)
	dateSufRE = regexp.MustCompile(`-(20\d{6}|20\d{2}-\d{2}-\d{2})$`)
)

func normalize(id string) string {
	s := strings.ToLower(strings.TrimSpace(id))
	s = regionRE.ReplaceAllString(s, "")
	for _, p := range []string{"models/", "anthropic/", "google/", "openai/", "deepseek/", "anthropic.", "openrouter/"} {
		s = strings.TrimPrefix(s, p)
	}
	s = bedrockRE.ReplaceAllString(s, "")
	s = dateSufRE.ReplaceAllString(s, "")
	return strings.ReplaceAll(s, ".", "-")
}
