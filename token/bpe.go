package token

import (
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Counter counts the tokens of a text.
type Counter interface {
	// Count returns the number of tokens in s.
	Count(s string) int
	// Name says how tokens are counted, for reports, e.g. "o200k_base (exact BPE)".
	Name() string
}

// Estimator is the fast Counter: Estimate (≈ 4 bytes per token).
type Estimator struct{}

// Count returns Estimate(s).
func (Estimator) Count(s string) int { return Estimate(s) }

// Name returns "estimate (≈4 bytes/token)".
func (Estimator) Name() string { return "estimate (≈4 bytes/token)" }

// BPE counts tokens exactly with a tiktoken encoding (tiktoken-go/tokenizer;
// vocabularies are compiled into the binary, nothing is downloaded).
type BPE struct {
	enc   tokenizer.Encoding
	note  string
	once  sync.Once
	codec tokenizer.Codec
	err   error
}

var (
	o200k  = &BPE{enc: tokenizer.O200kBase, note: "exact BPE"}
	cl100k = &BPE{enc: tokenizer.Cl100kBase, note: "approximation for Anthropic models: Anthropic does not publish its tokenizer"}
	// o200kOther counts with o200k_base for models whose own tokenizer is
	// not bundled (Gemini, DeepSeek, Nova, Llama, Mistral, Grok, …).
	o200kOther = &BPE{enc: tokenizer.O200kBase, note: "estimate: not this model's own tokenizer"}
)

// O200k returns the o200k_base counter (OpenAI gpt-4o, gpt-4.1, gpt-5, o-series).
func O200k() *BPE { return o200k }

// Cl100k returns the cl100k_base counter, strata's documented approximation
// for Anthropic models.
func Cl100k() *BPE { return cl100k }

// Count returns the exact token count of s. Invalid UTF-8 is counted after
// replacement; should the codec fail to load, the estimate is returned.
func (b *BPE) Count(s string) int {
	b.once.Do(func() {
		b.codec, b.err = tokenizer.Get(b.enc)
		if b.err == nil {
			b.codec.SetErrorMode(tokenizer.ErrorModeReplace)
		}
	})
	if b.err != nil {
		return Estimate(s)
	}
	n, err := b.codec.Count(s)
	if err != nil {
		return Estimate(s)
	}
	return n
}

// Name returns e.g. "o200k_base (exact BPE)".
func (b *BPE) Name() string { return string(b.enc) + " (" + b.note + ")" }

// ForModel returns the best bundled counter for a model id, whose Name says
// how close it is:
//   - OpenAI models (gpt-*, chatgpt-*, o1/o3/o4*, with or without a vendor
//     prefix such as "openai/" or "openai."): o200k_base, "exact BPE" (the
//     encoding OpenAI's tiktoken maps them to);
//   - Claude models (any id containing "claude", or starting "anthropic"):
//     cl100k_base, an approximation (see Cl100k);
//   - every other model (Gemini, DeepSeek, Amazon Nova, Llama, Grok, unknown
//     ids): o200k_base named "estimate: not this model's own tokenizer" —
//     their tokenizers are not bundled, so the count is an estimate.
func ForModel(model string) Counter {
	m := strings.ToLower(model)
	switch {
	case strings.Contains(m, "claude") || strings.HasPrefix(m, "anthropic"):
		return cl100k
	case isOpenAIModel(m):
		return o200k
	}
	return o200kOther
}

// isOpenAIModel reports whether the lower-case model id m names an OpenAI
// model that tiktoken maps to o200k_base.
func isOpenAIModel(m string) bool {
	for _, p := range []string{"openai/", "openai.", "azure/"} {
		m = strings.TrimPrefix(m, p)
	}
	if strings.HasPrefix(m, "gpt-") || strings.HasPrefix(m, "chatgpt-") || strings.HasPrefix(m, "ft:gpt-") {
		return true
	}
	for _, p := range []string{"o1", "o3", "o4"} {
		if m == p || strings.HasPrefix(m, p+"-") {
			return true
		}
	}
	return false
}
