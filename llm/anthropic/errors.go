package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/internal/limit"
)

// errorBody is Anthropic's error shape:
// {"type":"error","error":{"type":"rate_limit_error","message":"…"},"request_id":"req_…"}.
type errorBody struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

func parseErrorBody(raw string) errorBody {
	var b errorBody
	_ = json.Unmarshal([]byte(raw), &b) // a non-JSON body leaves the fields empty
	return b
}

// wrapError converts an SDK error: ctx errors are returned as ctx.Err();
// *sdk.Error (HTTP status ≥ 400, or an `event: error` inside a 200 stream,
// which the SDK reports with the stream's status 200) becomes *llm.APIError;
// anything else is wrapped, and also wraps llm.ErrStreamTruncated when
// midStream says the stream had started but not finished (a cut connection).
func wrapError(ctx context.Context, err error, midStream bool) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var e *sdk.Error
	if errors.As(err, &e) {
		body := parseErrorBody(e.RawJSON())
		ae := &llm.APIError{Provider: ProviderName, StatusCode: e.StatusCode, Type: string(e.Type()),
			Message: body.Error.Message, RequestID: e.RequestID}
		if ae.Type == "" {
			ae.Type = body.Error.Type
		}
		if ae.StatusCode == http.StatusOK {
			ae.StatusCode = 0 // an error event inside a 200 stream
		}
		if e.Response != nil {
			ae.RetryAfter = RetryAfter(e.Response.Header)
			if ae.RequestID == "" {
				ae.RequestID = e.Response.Header.Get("request-id")
			}
		}
		if ae.RequestID == "" {
			ae.RequestID = body.RequestID
		}
		if ae.Message == "" {
			if raw := strings.TrimSpace(e.RawJSON()); raw != "" && ae.Type == "" {
				ae.Message = raw
			} else {
				ae.Message = http.StatusText(e.StatusCode)
			}
		}
		return ae
	}
	// The SDK's fallback for an error event whose data is not JSON.
	if raw, ok := strings.CutPrefix(err.Error(), "received error while streaming: "); ok {
		body := parseErrorBody(raw)
		msg := body.Error.Message
		if msg == "" {
			msg = raw
		}
		return &llm.APIError{Provider: ProviderName, Type: body.Error.Type, Message: msg}
	}
	if midStream {
		return fmt.Errorf("anthropic: %w: %w", llm.ErrStreamTruncated, err)
	}
	return fmt.Errorf("anthropic: %w", err)
}

// RetryAfter reads how long the server asks to wait from response headers:
// retry-after-ms (milliseconds, Anthropic/Stainless extension) first, then
// retry-after (RFC 9110: seconds, or an HTTP date). It returns 0 when both
// are absent, unparseable or in the past.
func RetryAfter(h http.Header) time.Duration {
	d, _ := limit.RetryAfter(h, time.Now())
	return d
}
