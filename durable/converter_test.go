package durable

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/converter"

	"github.com/strata-agent/strata/session"
)

// TestDataConverterCompressesRequests: a session runs with DataConverter
// on both sides, and the session's last request (the whole conversation,
// as a model-call activity carries it) shrinks under it.
func TestDataConverterCompressesRequests(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "notes.txt"), "the notes\n")
	m := multiTool(t)
	h := newHarness(t, WorkerOptions{Options: options(dir, m, session.NewMemory())})
	h.env.SetDataConverter(DataConverter())
	h.prompt("Read notes.txt, log a line, write out.txt.")
	h.run(Spec{SessionID: "s-zlib"})
	if len(h.results) != 1 || h.results[0].Error != nil || h.results[0].Result.Message.Text() != "All done." {
		t.Fatalf("results %+v", h.results)
	}
	bodies := m.seen()
	raw := bodies[len(bodies)-1] // the last request: the whole conversation
	plain, err := converter.GetDefaultDataConverter().ToPayload(raw)
	if err != nil {
		t.Fatal(err)
	}
	packed, err := DataConverter().ToPayload(raw)
	if err != nil {
		t.Fatal(err)
	}
	ratio := float64(len(plain.Data)) / float64(len(packed.Data))
	t.Logf("the last %d-byte request: %d bytes plain, %d compressed (%.1f×)", len(raw), len(plain.Data), len(packed.Data), ratio)
	if ratio < 2 {
		t.Errorf("compression ratio %.1f, want at least 2", ratio)
	}
	var back string
	if err := DataConverter().FromPayload(packed, &back); err != nil || back != raw {
		t.Errorf("round trip: %v", err)
	}
}
