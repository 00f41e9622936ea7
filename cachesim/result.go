package cachesim

import (
	"errors"

	"github.com/strata-agent/strata/llm"
)

// Result is the simulated token accounting of one request (or, summed with
// Add, of a session), in tokens. The prompt is partitioned:
// Input + CacheRead + CacheWrite = prompt tokens, and CacheWrite =
// CacheWrite5m + CacheWrite1h.
type Result struct {
	Input        int64 `json:"input_tokens"`       // billed at the base input price
	CacheRead    int64 `json:"cache_read_tokens"`  // served from the cache
	CacheWrite   int64 `json:"cache_write_tokens"` // written to the cache (all TTLs)
	CacheWrite5m int64 `json:"cache_write_5m"`     // part of CacheWrite with the 5-minute TTL
	CacheWrite1h int64 `json:"cache_write_1h"`     // part of CacheWrite with the 1-hour TTL
	Output       int64 `json:"output_tokens"`      // generated tokens
	Requests     int64 `json:"requests,omitempty"` // number of requests summed (1 per Simulate)
	Prompt       int64 `json:"prompt_tokens"`      // Input + CacheRead + CacheWrite
}

// Add returns the field-wise sum of r and o.
func (r Result) Add(o Result) Result {
	return Result{
		Input:        r.Input + o.Input,
		CacheRead:    r.CacheRead + o.CacheRead,
		CacheWrite:   r.CacheWrite + o.CacheWrite,
		CacheWrite5m: r.CacheWrite5m + o.CacheWrite5m,
		CacheWrite1h: r.CacheWrite1h + o.CacheWrite1h,
		Output:       r.Output + o.Output,
		Requests:     r.Requests + o.Requests,
		Prompt:       r.Prompt + o.Prompt,
	}
}

// HitRatio returns CacheRead / Prompt (0 when Prompt is 0).
func (r Result) HitRatio() float64 {
	if r.Prompt == 0 {
		return 0
	}
	return float64(r.CacheRead) / float64(r.Prompt)
}

// Usage returns r as an llm.Usage (Reasoning is not simulated and stays 0).
func (r Result) Usage() llm.Usage {
	return llm.Usage{Input: r.Input, CacheRead: r.CacheRead, CacheWrite: r.CacheWrite, Output: r.Output}.WithTotal()
}

// ErrTooManyBreakpoints is returned (wrapped) by the Anthropic and Bedrock
// simulators for a request with more than MaxBreakpoints breakpoints: the API
// rejects such a request with HTTP 400 (Anthropic docs "Prompt caching": up to
// 4 cache breakpoints; Bedrock: up to 4 cache checkpoints). The request is
// then not simulated and leaves the cache unchanged.
var ErrTooManyBreakpoints = errors.New("cachesim: more than 4 cache breakpoints in one request")

// ErrTTLOrder is returned (wrapped) by the Anthropic and Bedrock simulators
// when a 1-hour breakpoint follows a 5-minute one (Anthropic docs "Prompt
// caching", mixing TTLs: "cache entries with longer TTL must appear before
// shorter TTLs"). The request is not simulated.
var ErrTTLOrder = errors.New("cachesim: a 1h cache breakpoint follows a 5m one")

// MaxBreakpoints is the most breakpoints one Anthropic/Bedrock request may
// carry (Anthropic docs "Prompt caching").
const MaxBreakpoints = llm.MaxBreakpoints

// Simulator simulates one provider's prompt cache over the requests of one
// session, in order. Simulate returns the token split of the request and
// updates the cache state; on error the request is rejected (as the provider
// would reject it) and the state is unchanged. Reset empties the cache.
// Implementations are not safe for concurrent use.
type Simulator interface {
	// Name is the provider id ("anthropic", "bedrock", "openai", "gemini",
	// "deepseek").
	Name() string
	Simulate(r Request) (Result, error)
	Reset()
}
