package token

import "github.com/strata-agent/strata/llm"

// Running counts the tokens of a growing conversation incrementally, as an
// agent loop tracking its context size does once per turn: each Update counts
// only the messages added since the previous Update, plus the previous last
// message again (the loop may have merged a new prompt into it), so the cost
// of a turn does not grow with the length of the history.
//
// It assumes the history is append-only apart from that last message; a
// shorter history (compaction, a new conversation) resets it. Not safe for
// concurrent use.
type Running struct {
	c      Counter
	counts []int // tokens per counted message
	total  int
}

// NewRunning returns a Running counter using c (nil = Estimator).
func NewRunning(c Counter) *Running {
	if c == nil {
		c = Estimator{}
	}
	return &Running{c: c}
}

// Update returns the tokens of history's content blocks (CountBlocks rules).
func (r *Running) Update(history []llm.Message) int {
	if len(history) < len(r.counts) {
		r.counts, r.total = r.counts[:0], 0
	}
	from := len(r.counts) - 1 // recount the previous last message
	if from < 0 {
		from = 0
	}
	if from < len(r.counts) {
		r.total -= r.counts[from]
		r.counts = r.counts[:from]
	}
	for _, m := range history[from:] {
		n := CountBlocks(r.c, m.Content)
		r.counts = append(r.counts, n)
		r.total += n
	}
	return r.total
}
