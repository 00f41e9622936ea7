package strata_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/session"
)

// A long answer through the whole runtime — the loop, its events and the
// SQLite store — costs memory in proportion to its length: four times the
// deltas allocate about four times the bytes (runtime.MemStats.TotalAlloc,
// the loopback server's included), and the stored message holds the whole
// text once.
func TestLongAnswerThroughTheLoopAndStore(t *testing.T) {
	const piece = 1 << 10
	var allocs [2]uint64
	for i, n := range []int{512, 2048} {
		resp, err := replay.TextDeltas(llm.APIAnthropic, n, strings.Repeat("q", piece))
		if err != nil {
			t.Fatal(err)
		}
		srv, err := replay.NewServer(resp)
		if err != nil {
			t.Fatal(err)
		}
		st, err := session.Open(filepath.Join(t.TempDir(), "s.db"))
		if err != nil {
			t.Fatal(err)
		}
		ws := openWorkspace(t, strata.Options{Dir: t.TempDir(), ProviderName: "anthropic", BaseURL: srv.URL(), Store: st, NoProjectFiles: true})
		s, err := ws.NewSession(context.Background(), strata.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := s.Prompt(context.Background(), "write a lot"); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		allocs[i] = after.TotalAlloc - before.TotalAlloc
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		h := s.History()
		if got := len(h[len(h)-1].Content[0].Text); got != n*piece {
			t.Errorf("%d deltas: the answer holds %d bytes, want %d", n, got, n*piece)
		}
		srv.Close()
		st.Close()
	}
	ratio := float64(allocs[1]) / float64(allocs[0])
	t.Logf("allocated %d bytes for a 512 KiB answer, %d for 2 MiB: ×%.1f", allocs[0], allocs[1], ratio)
	if ratio > 6 {
		t.Errorf("4× the answer allocated ×%.1f the memory through the loop and store (linear is ≈4)", ratio)
	}
}
