package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/internal/limit"
)

// Config configures a Chat or Responses provider.
type Config struct {
	// Name is the provider id reported by Name(): "openai-chat",
	// "openai-responses", or a compatible server's id ("deepseek", "xai",
	// "ollama", "vllm", "openai-compatible"). It is also the Provider field of
	// every *llm.APIError. Empty means "openai-chat" / "openai-responses".
	Name string
	// APIKey is sent as "Authorization: Bearer <key>". Empty leaves the SDK
	// default (the OPENAI_API_KEY environment variable, if set).
	APIKey string
	// BaseURL is the API root the endpoint path is appended to. Empty = SDK
	// default (https://api.openai.com/v1, or OPENAI_BASE_URL). Compatible
	// servers: e.g. https://api.deepseek.com/v1, http://localhost:11434/v1.
	BaseURL string
	// HTTPClient is the client the SDK sends with; nil = the SDK default.
	HTTPClient *http.Client
	// MaxRetries is how many times a request is sent again after a 408,
	// 409, 429 or 5xx answer or a connection error, before any byte is
	// streamed (llm.Limits gives the policy; the SDK's own retries are off);
	// 0 = none. Negative values count as 0.
	MaxRetries int
	// Limits bound the idle wait, the honoured retry delay and the whole
	// call (llm.Limits; the zero value applies the defaults).
	Limits llm.Limits
	// NonStreaming uses the non-streaming endpoint variant (no "stream":
	// true); Stream then emits the final content as deltas in one go after
	// the complete JSON response arrived.
	NonStreaming bool
}

func (c Config) name(def string) string {
	if c.Name != "" {
		return c.Name
	}
	return def
}

// newClient builds the SDK client for cfg, named name, and the limiter its
// Stream calls run through. Every request also goes through endMiddleware
// (see streamEnd); the SDK's retries are off: the HTTP client applies
// cfg.MaxRetries and cfg.Limits.
func newClient(cfg Config, name string) (openai.Client, *limit.Limiter) {
	lim := limit.New(limit.Options{Provider: name, Limits: cfg.Limits, MaxRetries: cfg.MaxRetries, Streaming: !cfg.NonStreaming})
	opts := []option.RequestOption{
		option.WithMaxRetries(0),
		option.WithMiddleware(endMiddleware),
		option.WithHTTPClient(lim.Client(cfg.HTTPClient)),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return openai.NewClient(opts...), lim
}

// streamEnd records whether a Chat Completions response body carried the
// terminal "data: [DONE]" line. The SDK's ssestream.Stream ends iteration the
// same way for [DONE] and for a clean EOF, so without this a stream cut after
// its finish_reason chunk (losing the usage chunk) would pass as complete.
// It only looks for that one marker line in the bytes the SDK reads; all SSE
// decoding stays in the SDK.
type streamEnd struct {
	carry []byte // last bytes of the previous read, to find a marker split across reads
	done  bool
}

var doneLine = []byte("\ndata: [DONE]")

func (e *streamEnd) observe(p []byte) {
	if e.done || len(p) == 0 {
		return
	}
	buf := append(e.carry, p...)
	if bytes.Contains(buf, doneLine) || bytes.HasPrefix(buf, doneLine[1:]) || bytes.Contains(buf, []byte("\ndata:[DONE]")) {
		e.done = true
		return
	}
	if n := len(doneLine); len(buf) > n {
		buf = buf[len(buf)-n:]
	}
	e.carry = append(e.carry[:0], buf...)
}

type endKey struct{}

// endMiddleware wraps the response body of requests whose context carries a
// *streamEnd so that the bytes read are observed.
func endMiddleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if end, ok := req.Context().Value(endKey{}).(*streamEnd); ok && err == nil && resp != nil && resp.Body != nil {
		resp.Body = &observedBody{ReadCloser: resp.Body, end: end}
	}
	return resp, err
}

type observedBody struct {
	io.ReadCloser
	end *streamEnd
}

func (b *observedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.end.observe(p[:n])
	return n, err
}

// truncated returns an error wrapping llm.ErrStreamTruncated.
func truncated(provider, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", provider, fmt.Sprintf(format, args...), llm.ErrStreamTruncated)
}

// mapError converts an SDK or transport error into strata's error contract:
// *openai.Error (HTTP status ≥ 400) → *llm.APIError with StatusCode, Type
// (error.type), Code (error.code, numbers rendered as text), Message,
// RequestID (x-request-id) and RetryAfter (retry-after-ms, else retry-after
// as seconds or an HTTP date); an *ssestream.StreamError (a data event
// carrying an "error" object: Groq tool_use_failed, OpenRouter, Responses
// "error" events) → *llm.APIError with StatusCode 0 unless the error names
// one; a cancelled ctx → ctx.Err(); anything else is wrapped with the
// provider name. A read error mid-stream (connection cut) also wraps
// llm.ErrStreamTruncated.
func mapError(ctx context.Context, provider string, err error, midStream bool) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var oe *openai.Error
	if errors.As(err, &oe) {
		ae := &llm.APIError{
			Provider:   provider,
			StatusCode: oe.StatusCode,
			Type:       oe.Type,
			Code:       fieldText(oe.Code, oe.JSON.Code.Raw()),
			Message:    oe.Message,
		}
		if ae.Message == "" && oe.RawJSON() == "" && oe.Response != nil {
			ae.Message = http.StatusText(oe.StatusCode)
		}
		if oe.Response != nil {
			ae.RequestID = oe.Response.Header.Get("x-request-id")
			ae.RetryAfter, _ = limit.RetryAfter(oe.Response.Header, time.Now())
		}
		return ae
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return streamAPIError(provider, se.Event.Data)
	}
	if midStream {
		return fmt.Errorf("%s: reading stream: %v: %w", provider, err, llm.ErrStreamTruncated)
	}
	return fmt.Errorf("%s: %w", provider, err)
}

// streamAPIError decodes the data of an in-stream error event, shaped
// {"error": {"type", "code", "message", "param", "status_code"?}} (Chat
// Completions servers, Responses "error" events as recorded) or, for the
// documented Responses ResponseErrorEvent, {"type":"error","code","message"}.
func streamAPIError(provider string, data []byte) *llm.APIError {
	var ev struct {
		Type    string          `json:"type"`
		Code    any             `json:"code"`
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	ae := &llm.APIError{Provider: provider}
	if err := json.Unmarshal(data, &ev); err != nil {
		ae.Message = "malformed error event: " + truncate(string(data), 200)
		return ae
	}
	var oe openai.Error
	if len(ev.Error) > 0 && string(ev.Error) != "null" && oe.UnmarshalJSON(ev.Error) == nil {
		ae.Type, ae.Message = oe.Type, oe.Message
		ae.Code = fieldText(oe.Code, oe.JSON.Code.Raw())
		if st, ok := oe.JSON.ExtraFields["status_code"]; ok {
			ae.StatusCode, _ = strconv.Atoi(st.Raw())
		}
		if ae.Type == "" && ae.StatusCode == 0 {
			// OpenRouter puts the HTTP status in "code".
			if n, err := strconv.Atoi(ae.Code); err == nil && n >= 400 && n < 600 {
				ae.StatusCode = n
			}
		}
		return ae
	}
	ae.Type = ev.Type
	ae.Code = anyText(ev.Code)
	ae.Message = ev.Message
	return ae
}

// fieldText returns s, or the raw JSON of a non-string value (e.g. a numeric
// error code) when the SDK could not decode it as a string.
func fieldText(s, raw string) string {
	if s != "" || raw == "" || raw == "null" {
		return s
	}
	if uq, err := strconv.Unquote(raw); err == nil {
		return uq
	}
	return raw
}

func anyText(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// emit calls onDelta when it is set.
func emit(onDelta func(llm.Delta), d llm.Delta) {
	if onDelta != nil && (d.Text != "" || d.Type == llm.DeltaToolCall) {
		onDelta(d)
	}
}
