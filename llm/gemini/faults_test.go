package gemini

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

func stream(t *testing.T, r replay.Response) (*llm.Response, error) {
	t.Helper()
	var resp *llm.Response
	_, err := replay.With(func(url string) error {
		p, err := New(Config{APIKey: "test", BaseURL: url})
		if err != nil {
			return err
		}
		resp, err = p.Stream(context.Background(), &llm.Request{Model: "gemini-2.5-flash", Messages: []llm.Message{llm.UserText("hi")}}, nil)
		return err
	}, r)
	return resp, err
}

// A real stream cut before its finishReason is an error; the real 429 body
// gives a retryable APIError with the RetryInfo delay; the excluded
// fixtures still exist (so the exclusion list cannot rot).
func TestFaults(t *testing.T) {
	wire := shared.Path(t, "data/wire")
	for f := range excluded {
		if _, err := os.Stat(filepath.Join(wire, f)); err != nil {
			t.Errorf("excluded fixture %s: %v", f, err)
		}
	}
	full, err := replay.SSEFile(filepath.Join(wire, "vertexai-sdk-test-data/mock-responses/vertexai/streaming-success-basic-reply-long.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream(t, full); err != nil {
		t.Fatalf("whole stream: %v", err)
	}
	for _, cut := range []int{len(full.Body) / 3, len(full.Body) * 2 / 3} {
		r := full
		r.CutAfter = cut
		if resp, err := stream(t, r); err == nil {
			t.Errorf("cut after %d of %d bytes: success %+v", cut, len(full.Body), resp.Message)
		}
	}
	body, err := os.ReadFile(filepath.Join(wire, "vercel-ai/google/google-429-retry-info.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = stream(t, replay.Response{Status: 429, Body: body, Header: http.Header{"Content-Type": {"application/json"}}})
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 429 || ae.Type != "RESOURCE_EXHAUSTED" || ae.RetryAfter != 34400*time.Millisecond || !ae.Retryable() {
		t.Errorf("429: %#v", err)
	}
}
