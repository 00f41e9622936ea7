package cachefit

import (
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// The gap model keeps 5-minute breakpoints until the session has idled past
// 5 minutes, then writes for an hour from the request after the pause on;
// it reads only the times it was given (never the future), and requests
// without a time change nothing.
func TestGapModelChoosesTTLFromObservedPauses(t *testing.T) {
	min := int64(time.Minute / time.Millisecond)
	tests := []struct {
		name  string
		times []int64 // Unix ms of each request
		want  []string
	}{
		{"no times", []int64{0, 0, 0}, []string{"", "", ""}},
		{"steady 30 s gaps", []int64{1, 1 + min/2, 1 + min, 1 + 3*min/2}, []string{"", "", "", ""}},
		{"exactly 5 minutes is no pause", []int64{1, 1 + 5*min, 1 + 10*min}, []string{"", "", ""}},
		{"a 6-minute pause", []int64{1, 1 + min, 1 + 2*min, 1 + 8*min, 1 + 9*min}, []string{"", "", "", "1h", "1h"}},
		{"one pause in a long session is rare", append(steady(40, min/2), 20*min+6*min, 26*min+min/2), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g gapModel
			var got []string
			for _, at := range tt.times {
				got = append(got, g.observe(at))
			}
			if tt.want == nil {
				// 40 calls, one pause: λ·n = 1/41·42·1.15 > 0.75 — 1 h pays.
				if got[len(got)-2] != "1h" || got[len(got)-3] != "" {
					t.Errorf("got %v", got)
				}
				return
			}
			for i := range tt.want {
				if got[i] != tt.want[i] {
					t.Errorf("request %d: TTL %q, want %q (all: %v)", i, got[i], tt.want[i], got)
				}
			}
		})
	}
}

func steady(n int, gap int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = 1 + int64(i)*gap
	}
	return out
}

// Every breakpoint of one request carries the chosen TTL, so a 1-hour one
// never follows a 5-minute one (Anthropic rejects that order).
func TestAssembleUsesOneTTLPerRequest(t *testing.T) {
	l := New()
	h := []llm.Message{llm.UserText("fix the bug")}
	for i, at := range []int64{1000, 1000 + int64(7*time.Minute/time.Millisecond)} {
		if i > 0 {
			h = append(h, llm.AssistantText("looking"), llm.UserText("go on"))
		}
		req, _, err := l.Assemble(&prompt.Context{System: "be brief", History: h, Now: at})
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]string{0: "", 1: "1h"}[i]
		if len(req.Breakpoints) < 2 {
			t.Fatalf("request %d: %d breakpoints", i, len(req.Breakpoints))
		}
		for _, bp := range req.Breakpoints {
			if bp.TTL != want {
				t.Errorf("request %d: breakpoint %+v, want TTL %q", i, bp, want)
			}
		}
	}
}
