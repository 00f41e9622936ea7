package providers

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// longAnswer returns a streamed answer of one text block sent as n deltas
// of size bytes each, in the wire format of provider: hand-written SSE
// for Anthropic (replay's author sends a block's text in one delta), one
// part per chunk for Gemini (the first chunk replay's author writes,
// repeated).
func longAnswer(t testing.TB, provider string, n, size int) replay.Response {
	t.Helper()
	piece := strings.Repeat("a", size)
	switch provider {
	case "anthropic":
		var b strings.Builder
		b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_long\",\"type\":\"message\",\"role\":\"assistant\"," +
			"\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n")
		b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		delta := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + piece + "\"}}\n\n"
		b.Grow(n * len(delta))
		for range n {
			b.WriteString(delta)
		}
		b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
		b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n")
		b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		return replay.Response{Body: []byte(b.String())}
	case "gemini":
		r, err := replay.Text(llm.APIGemini, piece)
		if err != nil {
			t.Fatal(err)
		}
		// The first event carries the text part; the API sends a long
		// answer as many such chunks, joined into one block.
		first, rest, ok := strings.Cut(string(r.Body), "\n\n")
		if !ok {
			t.Fatalf("gemini stream without events: %q", r.Body)
		}
		r.Body = []byte(strings.Repeat(first+"\n\n", n) + rest)
		return r
	}
	t.Fatalf("no long answer for %s", provider)
	return replay.Response{}
}

// allocated streams resp through the named provider with limits and
// returns the bytes allocated during the call (runtime.MemStats.TotalAlloc:
// every allocation of the process, the loopback server's included), the
// response and the error.
func allocated(t testing.TB, provider string, resp replay.Response, l llm.Limits) (uint64, *llm.Response, error) {
	t.Helper()
	srv, err := replay.NewServer(resp)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	spec, _ := Lookup(provider)
	p, err := New(spec, Options{APIKey: "test", BaseURL: srv.URL(), Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := p.Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}}, nil)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, r, err
}

// A long answer costs memory in proportion to its length: four times the
// deltas allocate about four times the bytes. The SDK accumulators strata
// used appended with string += (Anthropic's Message.Accumulate, the Gemini
// adapter), copying the whole text for every delta: sixteen times.
func TestLongAnswerAllocationsGrowLinearly(t *testing.T) {
	for _, provider := range []string{"anthropic", "gemini"} {
		t.Run(provider, func(t *testing.T) {
			var allocs [2]uint64
			for i, n := range []int{1024, 4096} {
				a, r, err := allocated(t, provider, longAnswer(t, provider, n, 256), llm.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if got := len(r.Message.Content[0].Text); len(r.Message.Content) != 1 || got != n*256 {
					t.Fatalf("%d deltas: %d blocks, text of %d bytes; want 1 block of %d", n, len(r.Message.Content), got, n*256)
				}
				allocs[i] = a
			}
			ratio := float64(allocs[1]) / float64(allocs[0])
			t.Logf("allocated %d bytes for 256 KiB, %d for 1 MiB: ×%.1f", allocs[0], allocs[1], ratio)
			if ratio > 6 {
				t.Errorf("4× the answer allocated ×%.1f the memory (linear is ≈4)", ratio)
			}
		})
	}
}

// A hostile or broken server's 50 MB answer: with MaxResponseBytes the
// call fails with ErrResponseTooLarge once that many bytes arrived, and
// memory is bounded by the cap, not by the answer (a 50 MB and a 12 MB
// answer cost the same); without a cap, it costs a bounded multiple of its
// size (it once took 620 MB).
func TestAttackHugeAnswerMemoryIsBounded(t *testing.T) {
	const capBytes = 4 << 20
	huge, medium := longAnswer(t, "anthropic", 3200, 16<<10), longAnswer(t, "anthropic", 768, 16<<10) // ≈ 50 MiB, 12 MiB
	var capped [2]uint64
	for i, resp := range []replay.Response{huge, medium} {
		a, r, err := allocated(t, "anthropic", resp, llm.Limits{MaxResponseBytes: capBytes})
		var le *llm.LimitError
		if !errors.Is(err, llm.ErrResponseTooLarge) || !errors.As(err, &le) || r != nil ||
			!strings.Contains(err.Error(), fmt.Sprint(capBytes)) || !strings.Contains(err.Error(), "MaxResponseBytes") {
			t.Fatalf("%d-byte answer, cap %d: resp %v, err %v; want ErrResponseTooLarge naming the cap", len(resp.Body), capBytes, r != nil, err)
		}
		capped[i] = a
	}
	if ratio := float64(capped[0]) / float64(capped[1]); ratio > 1.5 {
		t.Errorf("capped at %d bytes, a 50 MiB answer allocated ×%.2f what a 12 MiB one did (%d vs %d bytes)", capBytes, ratio, capped[0], capped[1])
	}
	a, r, err := allocated(t, "anthropic", huge, llm.Limits{MaxResponseBytes: -1})
	if err != nil || len(r.Message.Content[0].Text) != 3200*16<<10 {
		t.Fatalf("uncapped: %v", err)
	}
	perByte := float64(a) / float64(len(huge.Body))
	t.Logf("uncapped 50 MiB answer: %d bytes allocated, %.1f per byte of the stream; capped at 4 MiB: %d", a, perByte, capped[0])
	if perByte > 12 {
		t.Errorf("a 50 MiB answer allocated %.1f bytes per byte of the stream", perByte)
	}
}
