package token

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
)

func turn(i int) []llm.Message {
	return []llm.Message{
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock(fmt.Sprintf("step %d: ", i) + strings.Repeat("reasoning text ", 40))}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock(fmt.Sprint("t", i), strings.Repeat("output line\n", 60), false)}},
	}
}

// Running equals a full recount after every turn, including when a prompt is
// merged into the last message and when the history shrinks.
func TestRunningMatchesFullCount(t *testing.T) {
	r := NewRunning(O200k())
	h := []llm.Message{llm.UserText("task")}
	full := func() int {
		n := 0
		for _, m := range h {
			n += CountBlocks(O200k(), m.Content)
		}
		return n
	}
	for i := 0; i < 30; i++ {
		h = append(h, turn(i)...)
		if i%7 == 3 { // the loop merges a steering prompt into the tool results
			h[len(h)-1].Content = append(h[len(h)-1].Content, llm.TextBlock("also check the tests"))
		}
		if got, want := r.Update(h), full(); got != want {
			t.Fatalf("turn %d: running %d, full %d", i, got, want)
		}
	}
	h = h[:5]
	if got, want := r.Update(h), full(); got != want {
		t.Fatalf("after shrinking: running %d, full %d", got, want)
	}
}

// BenchmarkRunningPerTurn: the cost of counting one more turn with exact BPE
// at 10 and at 1000 turns of history; ratio_1000/10 ≈ 1 means flat.
func BenchmarkRunningPerTurn(b *testing.B) {
	at := func(turns int) time.Duration {
		r := NewRunning(O200k())
		h := []llm.Message{llm.UserText("task")}
		for i := 0; i < turns; i++ {
			h = append(h, turn(i)...)
			r.Update(h)
		}
		next := append(h, turn(turns)...)
		t0 := time.Now()
		r.Update(next)
		d := time.Since(t0)
		r.Update(h) // back to the same state for the next round
		return d
	}
	var d10, d1000 time.Duration
	for i := 0; i < b.N; i++ {
		d10 += at(10)
		d1000 += at(1000)
	}
	b.ReportMetric(float64(d10.Nanoseconds())/float64(b.N), "ns/turn@10")
	b.ReportMetric(float64(d1000.Nanoseconds())/float64(b.N), "ns/turn@1000")
	b.ReportMetric(float64(d1000)/float64(d10), "ratio_1000/10")
}
