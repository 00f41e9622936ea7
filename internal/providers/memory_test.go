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
// of size bytes each in the wire format of provider (replay.TextDeltas).
func longAnswer(t testing.TB, provider string, n, size int) replay.Response {
	t.Helper()
	spec, err := Lookup(provider)
	if err != nil {
		t.Fatal(err)
	}
	r, err := replay.TextDeltas(spec.API, n, strings.Repeat("q", size))
	if err != nil {
		t.Fatal(err)
	}
	return r
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
// deltas allocate about four times the bytes. The accumulators strata used
// appended with string += (Anthropic's Message.Accumulate, the Gemini
// adapter), copying the whole text for every delta: fifteen times.
func TestLongAnswerAllocationsGrowLinearly(t *testing.T) {
	for _, provider := range []string{"anthropic", "gemini", "openai-chat"} {
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
