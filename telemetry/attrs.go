package telemetry

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/strata-agent/strata/cachesim"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// providerName maps a strata provider id to gen_ai.provider.name (the
// conventions' well-known values; another id is passed as it is).
func providerName(p string) attribute.KeyValue {
	switch p {
	case "anthropic":
		return semconv.GenAIProviderNameAnthropic
	case "bedrock":
		return semconv.GenAIProviderNameAWSBedrock
	case "gemini":
		return semconv.GenAIProviderNameGCPGemini
	case "openai-chat", "openai-responses", "openai":
		return semconv.GenAIProviderNameOpenAI
	case "deepseek":
		return semconv.GenAIProviderNameDeepseek
	case "xai":
		return semconv.GenAIProviderNameXAI
	}
	return semconv.GenAIProviderNameKey.String(p)
}

// providerError is error.type of a failed model call: the HTTP status of a
// provider's API error, else the error's kind.
func providerError(e event.Event) string {
	return errorType(e.Err, "provider_error")
}

// errorType names err's kind for error.type (low cardinality): an
// *llm.APIError's HTTP status code or provider error type, context
// cancellation, else fallback.
func errorType(err error, fallback string) string {
	var api *llm.APIError
	switch {
	case errors.As(err, &api) && api.StatusCode != 0:
		return strconv.Itoa(api.StatusCode)
	case errors.As(err, &api) && api.Type != "":
		return api.Type
	case err != nil && strings.Contains(err.Error(), "context canceled"):
		return "cancelled"
	}
	return fallback
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// costAttrs are the model call's cost in USD at the price table's prices
// (cachesim, docs/cache.md): strata.cost_usd for the whole call and
// strata.cache.cost_usd for its cache reads and writes; none for a model
// without a price.
func costAttrs(model string, u llm.Usage) []attribute.KeyValue {
	p, ok := cachesim.Lookup(model)
	if !ok {
		return nil
	}
	all := p.Cost(cachesim.Result{Input: u.Input, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, CacheWrite1h: u.CacheWrite1h, Output: u.Output})
	cache := p.Cost(cachesim.Result{CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, CacheWrite1h: u.CacheWrite1h})
	return []attribute.KeyValue{attribute.Float64("strata.cost_usd", all), attribute.Float64("strata.cache.cost_usd", cache)}
}

// spanCacheCost sums the layout's own per-span cost of the request
// (prompt.SpanCache), when the layout tracks it.
func spanCacheCost(bd *prompt.Breakdown) (float64, bool) {
	var sum float64
	tracked := false
	for _, s := range bd.Spans {
		if s.Cache != nil {
			sum += s.Cache.Cost
			tracked = true
		}
	}
	return sum, tracked
}

// messagesJSON renders messages in the conventions' shape for
// gen_ai.input.messages / gen_ai.output.messages: [{role, parts: [{type,
// content | id, name, arguments | response}]}].
func messagesJSON(ms []llm.Message) string {
	type part struct {
		Type      string          `json:"type"`
		Content   string          `json:"content,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		Response  string          `json:"response,omitempty"`
	}
	type msg struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	out := make([]msg, 0, len(ms))
	for _, m := range ms {
		x := msg{Role: string(m.Role), Parts: []part{}}
		for _, b := range m.Content {
			switch b.Type {
			case llm.BlockText:
				x.Parts = append(x.Parts, part{Type: "text", Content: b.Text})
			case llm.BlockToolUse:
				x.Parts = append(x.Parts, part{Type: "tool_call", ID: b.ID, Name: b.Name, Arguments: b.Input})
			case llm.BlockToolResult:
				x.Parts = append(x.Parts, part{Type: "tool_call_response", ID: b.ID, Response: resultText(b)})
			}
		}
		out = append(out, x)
	}
	j, _ := json.Marshal(out)
	return string(j)
}

// resultText is the text of a tool_result block.
func resultText(b llm.Block) string {
	var sb strings.Builder
	for _, c := range b.Content {
		sb.WriteString(c.Text)
	}
	return sb.String()
}
