package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// fuzzProviders are the providers whose stream decoders FuzzProviderStream
// drives, one per wire API (the compatible ones share openai-chat's code).
var fuzzProviders = []string{"anthropic", "openai-chat", "openai-responses", "gemini", "bedrock"}

// bodyTransport answers every request with status 200, the Content-Type of
// a stream and body: the SDK's decoder and strata's adapter get arbitrary
// bytes as if a server had sent them. It never touches the network.
type bodyTransport struct {
	contentType string
	body        []byte
}

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {b.contentType}}, Body: io.NopCloser(bytes.NewReader(b.body)),
		ContentLength: -1, Request: r}, nil
}

// FuzzProviderStream feeds arbitrary bytes, as the body of a streamed
// answer, through each provider's official SDK decoder and strata's
// adapter (SSE for Anthropic, OpenAI and Gemini, the AWS event stream for
// Bedrock). A call must end — with a response or an error — and never
// panic or hang; a nil error comes with a response. Seeds are real
// streams authored by llm/replay (text and tool use) and cuts of them.
func FuzzProviderStream(f *testing.F) {
	for i, name := range fuzzProviders {
		spec, err := Lookup(name)
		if err != nil {
			f.Fatal(err)
		}
		call := llm.ToolUseBlock("toolu_1", "fs_read", json.RawMessage(`{"path":"a"}`))
		for _, reply := range []replay.Reply{{Blocks: []llm.Block{llm.TextBlock("hello")}}, {Blocks: []llm.Block{llm.TextBlock("x"), call}}} {
			resp, err := replay.Turn(spec.API, reply)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), resp.Body)
			f.Add(uint8(i), resp.Body[:len(resp.Body)/2])
		}
		f.Add(uint8(i), []byte("data: {}\n\n"))
		f.Add(uint8(i), []byte{0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		name := fuzzProviders[int(which)%len(fuzzProviders)]
		spec, _ := Lookup(name)
		ct := "text/event-stream"
		if spec.API == llm.APIBedrock {
			ct = "application/vnd.amazon.eventstream"
		}
		p, err := New(spec, Options{APIKey: "test", BaseURL: "http://127.0.0.1:9", // never dialled: the transport answers
			HTTPClient: &http.Client{Transport: bodyTransport{contentType: ct, body: body}}})
		if err != nil {
			t.Fatal(err)
		}
		// A hang guard, not a measurement: a decoder that loops on its input
		// fails here instead of stalling the fuzzer.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		resp, err := p.Stream(ctx, &llm.Request{Model: "fuzz-model", Messages: []llm.Message{llm.UserText("hi")}}, func(llm.Delta) {})
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			t.Fatalf("%s: the call hung on a %d-byte body", name, len(body))
		}
		if err == nil && resp == nil {
			t.Fatalf("%s: nil response and nil error", name)
		}
	})
}
