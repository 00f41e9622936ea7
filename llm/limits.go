package llm

import (
	"errors"
	"fmt"
	"time"
)

// Limits bound how long one Provider.Stream call may wait on the network. Every
// provider of this module (llm/anthropic, llm/openai, llm/bedrock,
// llm/gemini) applies them, and its retries, the same way, in one place
// (package llm/internal/limit): the SDKs' own retries are turned off, because
// their retry delay has no upper bound (a `retry-after: 100000` made the
// Anthropic SDK sleep 28 hours).
//
// Retries: a request is sent again, at most the provider Config's MaxRetries
// times, when the server answers 408, 409, 429 or ≥ 500, or the connection
// fails before a response arrives; the `x-should-retry: true|false` header
// of an error answer (status ≥ 400) overrides its status (the Anthropic and
// OpenAI APIs send it). A
// retry happens only before any byte of the response body reached the
// provider: a response that started to stream is never sent again (see
// Provider). The wait before a retry is the one the server asks for —
// `retry-after-ms` (milliseconds), else `retry-after` (seconds, or an HTTP
// date; RFC 9110 §10.2.3), else Gemini's google.rpc.RetryInfo retryDelay in
// the error body — and otherwise 0.5 s × 2^n (n = retries so far), at most
// 8 s, less up to 25 % jitter (the Stainless SDKs' backoff, as in
// anthropic-sdk-python's _calculate_retry_timeout).
//
// The zero value applies the defaults below. A negative duration turns that
// limit off.
type Limits struct {
	// StreamIdleTimeout is the longest the provider waits for the server to
	// send anything: for the response headers, and between two reads of a
	// streamed body that deliver bytes (SSE keep-alive pings count as
	// data). Past it the call fails with a *LimitError wrapping
	// ErrStreamIdle that names the provider and the wait. It is not applied
	// to non-streaming requests (Config.NonStreaming), whose answer only
	// starts once it is complete: RequestTimeout bounds those. 0 =
	// DefaultStreamIdleTimeout.
	StreamIdleTimeout time.Duration
	// MaxRetryDelay is the longest wait before a retry that is honoured.
	// When a retryable answer asks for a longer one (its retry-after), the
	// call fails at once, without waiting and without a retry, with a
	// *LimitError wrapping ErrRetryDelayTooLong and the provider's error
	// (usually an *APIError), naming the delay asked for. 0 =
	// DefaultMaxRetryDelay.
	MaxRetryDelay time.Duration
	// RequestTimeout bounds a whole Stream call: every attempt, the waits
	// between them and the streamed answer. Past it the call fails with a
	// *LimitError wrapping ErrRequestTimeout. 0 = no limit (the default: a
	// long answer that keeps streaming is not a hang; StreamIdleTimeout
	// catches the hangs).
	RequestTimeout time.Duration
	// MaxResponseBytes bounds the bytes of one answer's body the provider
	// reads (the SSE or AWS event stream as sent, framing included, so
	// memory stays proportional to it). Past it the provider stops reading
	// and the call fails with a *LimitError wrapping ErrResponseTooLarge
	// that names the limit: a cut answer is not returned, as a cut tool_use
	// input could run a different call. 0 = DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// Defaults of Limits.
const (
	// DefaultStreamIdleTimeout is 5 minutes, the default stream idle timeout
	// of OpenAI's Codex CLI (stream_idle_timeout_ms = 300000): reasoning
	// models may send nothing for minutes while they think (OpenAI models
	// behind Chat Completions stream no reasoning, Gemini sends no thought
	// text unless asked), so a shorter default would end healthy answers.
	DefaultStreamIdleTimeout = 5 * time.Minute
	// DefaultMaxRetryDelay is 60 seconds, the longest retry-after the
	// Anthropic and OpenAI Python SDKs honour (_calculate_retry_timeout:
	// 0 < retry_after ≤ 60).
	DefaultMaxRetryDelay = 60 * time.Second
	// DefaultMaxResponseBytes is 64 MiB of response body: the longest
	// answers of today's models (128k output tokens plus as much reasoning,
	// ≈ 1 MB of text) take 5–20 MB as SSE events, so the cap leaves room
	// and still bounds what a hostile or broken server can make strata
	// hold (a 50 MB answer used to take 620 MB of memory).
	DefaultMaxResponseBytes = 64 << 20
)

// Errors a *LimitError wraps (test with errors.Is).
var (
	// ErrStreamIdle: the server sent nothing for Limits.StreamIdleTimeout.
	ErrStreamIdle = errors.New("llm: stream idle timeout")
	// ErrRetryDelayTooLong: a retryable answer asked to wait longer than
	// Limits.MaxRetryDelay; the call was not retried.
	ErrRetryDelayTooLong = errors.New("llm: retry delay longer than the maximum")
	// ErrRequestTimeout: the call took longer than Limits.RequestTimeout.
	ErrRequestTimeout = errors.New("llm: request timeout")
	// ErrResponseTooLarge: the answer's body passed
	// Limits.MaxResponseBytes; the provider stopped reading it.
	ErrResponseTooLarge = errors.New("llm: response too large")
)

// LimitError reports a Stream call that one of its Limits ended. It is
// returned as is (not wrapped) by every provider of this module.
type LimitError struct {
	Provider string // provider id, e.g. "anthropic"
	// Kind is ErrStreamIdle, ErrRetryDelayTooLong, ErrRequestTimeout or
	// ErrResponseTooLarge.
	Kind error
	// Limit is the configured limit that was reached.
	Limit time.Duration
	// Wait is how long was waited (ErrStreamIdle, ErrRequestTimeout: equal
	// to Limit) or, for ErrRetryDelayTooLong, the delay the server asked
	// for.
	Wait time.Duration
	// Detail says where it happened, e.g. "while waiting for the response
	// headers", "after 812 bytes of the response", "HTTP 429".
	Detail string
	// LimitBytes is the byte limit reached (ErrResponseTooLarge), else 0.
	LimitBytes int64
	// Err is the provider's error for the answer that was not retried
	// (ErrRetryDelayTooLong; usually an *APIError), else nil.
	Err error
}

// Error returns one line naming the provider, what happened, the wait and
// the setting that bounds it, e.g. "anthropic: stream idle: no data from the
// server for 5m0s after 812 bytes of the response (stream idle timeout
// 5m0s: --stream-idle-timeout, Limits.StreamIdleTimeout)".
func (e *LimitError) Error() string {
	switch e.Kind {
	case ErrStreamIdle:
		return fmt.Sprintf("%s: stream idle: no data from the server for %s %s (stream idle timeout %s: --stream-idle-timeout, Limits.StreamIdleTimeout)",
			e.Provider, e.Wait, e.Detail, e.Limit)
	case ErrRetryDelayTooLong:
		what := e.Provider + ": " + e.Detail
		if e.Err != nil {
			what = e.Err.Error()
		}
		return fmt.Sprintf("%s: not retried: the server asks to wait %s before a retry, longer than the max retry delay %s (--max-retry-delay, Limits.MaxRetryDelay)",
			what, e.Wait, e.Limit)
	case ErrRequestTimeout:
		return fmt.Sprintf("%s: request timeout: no complete answer within %s (--request-timeout, Limits.RequestTimeout)",
			e.Provider, e.Limit)
	case ErrResponseTooLarge:
		return fmt.Sprintf("%s: response too large: the answer passed %d bytes and strata stopped reading it (max response size: Limits.MaxResponseBytes)",
			e.Provider, e.LimitBytes)
	}
	return fmt.Sprintf("%s: %v %s", e.Provider, e.Kind, e.Detail)
}

// Unwrap returns Kind and, when set, Err.
func (e *LimitError) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}
