package strata_test

import (
	"math"
	"testing"

	"github.com/strata-agent/strata"
)

// UsageReport of a session on a priced model with a known window: the
// context after the prompt's call, the 200k window, and the cost of the
// prompt's call and of each ping (5-minute writes: the first request of a
// cachefit loop asks for no 1-hour entry). Resumed, the session holds what
// its last stored call left (the same 2,047 tokens) in the same window; it
// starts from stored calls, which UsageReport prices only where their
// cache writes' TTL cannot matter (turns stored before schema 4 kept no
// split), so its cost is unknown, not a guess.
func TestUsageReport(t *testing.T) {
	clk := newFakeClock()
	m := keepAliveModel(t)
	o := keepAliveOptions(t, clk, 2)
	o.Model = "claude-sonnet-4-5-20250929"
	ws, s := openScripted(t, o, m)
	if r := s.UsageReport(); r != (strata.UsageReport{Window: 200_000, Priced: true}) {
		t.Errorf("before any call: %+v; want only the window (and a zero cost, known)", r)
	}
	if _, err := s.Prompt(t.Context(), "first question"); err != nil {
		t.Fatal(err)
	}
	clk.fire(t)
	// claude-sonnet-4-5, USD per million tokens: input 3, cache read 0.30,
	// 5-minute write 3.75, output 15 (cachesim's table).
	want := (40*3+2000*3.75+7*15)/1e6 + (3*3+2000*0.3+1*15)/1e6
	r := s.UsageReport()
	if r.Context != 40+2000+7 || r.Window != 200_000 || !r.Priced || math.Abs(r.CostUSD-want) > 1e-12 {
		t.Errorf("after a prompt and a ping: %+v; want context 2047 of 200000, %.6f USD", r, want)
	}
	id := s.ID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rs, err := ws.ResumeSession(t.Context(), id, strata.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if r := rs.UsageReport(); r != (strata.UsageReport{Context: 2047, Window: 200_000}) {
		t.Errorf("resumed: %+v; want context 2047 of 200000 and no cost", r)
	}
}
