package llm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DeltaType names the kind of a stream delta (docs/turn.md, rule 10).
type DeltaType string

// Stream delta kinds.
const (
	DeltaText     DeltaType = "text"      // a fragment of assistant text
	DeltaThinking DeltaType = "thinking"  // a fragment of reasoning/thinking text
	DeltaToolCall DeltaType = "tool_call" // a fragment of a tool call's JSON arguments
)

// Delta is one incremental piece of a streamed response.
//
// Index is the position of the content block the fragment belongs to in the
// final Response.Message.Content, so a consumer can group fragments. For
// DeltaToolCall, ID and Name are set on every fragment of the call and Text
// holds a fragment of the JSON arguments: the concatenation of a call's
// fragments is its complete arguments document (parse it after the stream
// ends, never before).
type Delta struct {
	Type  DeltaType `json:"type"`
	Index int       `json:"index"`
	Text  string    `json:"text,omitempty"`
	ID    string    `json:"id,omitempty"`
	Name  string    `json:"name,omitempty"`
}

// Provider sends one request to a model and streams the answer.
//
// Stream validates req, sends it, calls onDelta for each fragment as it
// arrives (in order, from the calling goroutine; onDelta must not retain the
// Delta's memory past the call and may be nil), and returns the complete
// assistant message with its stop reason and usage once the provider signals
// the end of the response.
//
// Stream never returns a partial response as success: a stream that ends
// before the provider's final event returns an error wrapping
// ErrStreamTruncated; an HTTP or in-stream provider error returns an
// *APIError; a cancelled ctx returns ctx.Err() (possibly wrapped). On error
// the deltas already delivered must be discarded by the caller.
//
// Implementations are safe for concurrent use. They retry a request only
// before any byte of its answer is streamed, so a partial stream is never
// sent again; the providers of this module do so as Limits documents, and
// end a call that waits too long with a *LimitError.
type Provider interface {
	// Name is the provider id used on the command line
	// ("anthropic", "openai-chat", "openai-responses", …).
	Name() string
	// API is the wire API the provider speaks. Layouts that differ per
	// wire family read it from prompt.Context.API, which the loop sets
	// from this method, so what is sent equals what `strata render` shows.
	API() API
	Stream(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error)
}

// API names a provider wire API: the request and stream format a provider
// speaks. Several providers share one (every OpenAI-compatible server speaks
// APIOpenAIChat).
type API string

// The wire APIs strata encodes.
const (
	APIAnthropic       API = "anthropic"        // Anthropic Messages
	APIOpenAIChat      API = "openai-chat"      // OpenAI Chat Completions (and compatible servers)
	APIOpenAIResponses API = "openai-responses" // OpenAI Responses
	APIBedrock         API = "bedrock"          // Amazon Bedrock Converse / ConverseStream
	APIGemini          API = "gemini"           // Google Gemini generateContent
)

// TakesBreakpoints reports whether requests of a carry explicit cache
// breakpoints (Anthropic cache_control, Bedrock cachePoint): only those
// caches are placed by a layout and kept alive by a ping. OpenAI and Gemini
// cache prefixes on their own and get none.
func (a API) TakesBreakpoints() bool { return a == APIAnthropic || a == APIBedrock }

// SplitsCacheWrites reports whether responses of a split cache writes by
// TTL (Usage.CacheWrite1h; 0 then means every write had the 5-minute TTL):
// Anthropic's usage.cache_creation does; Bedrock Converse reports only
// cacheWriteInputTokens, and the automatic caches write nothing billed.
func (a API) SplitsCacheWrites() bool { return a == APIAnthropic }

// APIs lists every wire API, in the order above.
var APIs = []API{APIAnthropic, APIOpenAIChat, APIOpenAIResponses, APIBedrock, APIGemini}

// ErrStreamTruncated reports a response stream that ended before the
// provider's terminal event (Anthropic message_stop, OpenAI [DONE] /
// finish_reason, Responses response.completed).
var ErrStreamTruncated = errors.New("llm: response stream ended before the final event")

// ErrInvalidRequest is wrapped by Stream's error when the request is not
// sent because it cannot be: Request.Validate fails, or the provider's wire
// API cannot express a field (each provider's "Request mapping" doc lists
// which). The caller must change the request; retrying cannot help.
var ErrInvalidRequest = errors.New("llm: invalid request")

// InvalidRequest marks err as an invalid request (errors.Is(…,
// ErrInvalidRequest) holds) and keeps its message and chain. Providers use it
// for errors found before anything is sent.
func InvalidRequest(err error) error {
	if err == nil {
		return nil
	}
	return invalidRequest{err}
}

type invalidRequest struct{ err error }

func (e invalidRequest) Error() string   { return e.err.Error() }
func (e invalidRequest) Unwrap() []error { return []error{ErrInvalidRequest, e.err} }

// APIError is an error reported by a provider: an HTTP status ≥ 400, or an
// error event inside a 200 stream (StatusCode is then 0 unless the event names
// one).
type APIError struct {
	Provider   string        // provider id, e.g. "anthropic"
	StatusCode int           // HTTP status, 0 for an in-stream error without one
	Type       string        // provider error type, e.g. "rate_limit_error", "invalid_request_error", "insufficient_quota"
	Code       string        // provider error code where one is sent (OpenAI "code")
	Message    string        // provider's human-readable message
	RequestID  string        // request-id / x-request-id header
	RetryAfter time.Duration // from retry-after / retry-after-ms headers; 0 when absent
}

// Error returns "provider: HTTP status type: message (request id …)".
func (e *APIError) Error() string {
	s := e.Provider + ":"
	if e.StatusCode != 0 {
		s += fmt.Sprintf(" HTTP %d", e.StatusCode)
	}
	if e.Type != "" {
		s += " " + e.Type
	}
	if e.Code != "" && e.Code != e.Type {
		s += " (" + e.Code + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RequestID != "" {
		s += " (request id " + e.RequestID + ")"
	}
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter.Round(time.Millisecond))
	}
	return s
}

// Retryable reports whether the status is one a client may retry after
// waiting: 408, 409, 429 and 5xx (Anthropic 529 overloaded included).
func (e *APIError) Retryable() bool {
	return e.StatusCode == 408 || e.StatusCode == 409 || e.StatusCode == 429 || e.StatusCode >= 500
}

// ReplayDeltas reports a non-streamed message's content as deltas (for a
// provider's non-streaming path), one per
// text, thinking and tool_use block (a tool call's whole input in one
// fragment), with the same indexes as the message.
func ReplayDeltas(m Message, onDelta func(Delta)) {
	for i, b := range m.Content {
		switch b.Type {
		case BlockText:
			if b.Text != "" {
				onDelta(Delta{Type: DeltaText, Index: i, Text: b.Text})
			}
		case BlockThinking:
			if b.Text != "" {
				onDelta(Delta{Type: DeltaThinking, Index: i, Text: b.Text})
			}
		case BlockToolUse:
			onDelta(Delta{Type: DeltaToolCall, Index: i, Text: string(b.Input), ID: b.ID, Name: b.Name})
		}
	}
}
