package bedrock

import (
	"context"
	"errors"
	"net/http"
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
	_, err := replay.With(func(url string) (err error) {
		p := mustNew(t, Config{Region: "us-east-1", AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", BaseURL: url})
		resp, err = p.Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}}, nil)
		return err
	}, r)
	return resp, err
}

// A real stream cut anywhere before its messageStop is an error, never a
// partial success; a 429 with Retry-After is a typed, retryable APIError.
func TestFaults(t *testing.T) {
	full, err := replay.EventStreamFile(filepath.Join(shared.Path(t, "data/wire"),
		"pydantic-ai/bedrock-eventstream-extracted/test_bedrock_model_iter_stream.0.eventstream"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream(t, full); err != nil {
		t.Fatalf("whole stream: %v", err)
	}
	for _, cut := range []int{len(full.Body) / 4, len(full.Body) / 2, len(full.Body) - 20} {
		r := full
		r.CutAfter = cut
		if resp, err := stream(t, r); err == nil {
			t.Errorf("cut after %d of %d bytes: success %+v", cut, len(full.Body), resp.Message)
		}
	}
	r := replay.Response{Status: 429, Header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"7"},
		"X-Amzn-Errortype": {"ThrottlingException"}, "X-Amzn-Requestid": {"req-123"}},
		Body: []byte(`{"message":"Too many requests, please wait before trying again."}`)}
	_, err = stream(t, r)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 429 || ae.Type != "ThrottlingException" || ae.RetryAfter != 7*time.Second ||
		ae.RequestID != "req-123" || !ae.Retryable() || ae.Message == "" {
		t.Errorf("429: %#v", err)
	}
}
