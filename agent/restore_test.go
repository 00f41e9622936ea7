package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/tool"
	"github.com/strata-agent/strata/trajectory"
)

// TestRestoreFromCheckpointMatchesReplay restores a recorded session both
// ways — replaying the layout over the stored history (Restore) and loading
// the checkpoint (RestoreState) — and checks that the next request is
// byte-identical for every layout, and that a checkpoint of another layout
// or another history falls back to the replay.
func TestRestoreFromCheckpointMatchesReplay(t *testing.T) {
	rs := loadRecorded(t, trainSessions(t, 1)[0], 6)
	for _, layout := range prompt.Names() {
		t.Run(layout, func(t *testing.T) {
			r := newStepRig(t, rs, layout)
			a, err := New(r.cfg())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Prompt(context.Background(), rs.task); err != nil {
				t.Fatal(err)
			}
			saved := a.Checkpoint()
			data, err := json.Marshal(saved)
			if err != nil {
				t.Fatal(err)
			}
			var decoded State
			if err := json.Unmarshal(data, &decoded); err != nil {
				t.Fatal(err)
			}
			history := a.History()
			next := func(b *Agent) []byte {
				t.Helper()
				srv, err := replay.NewServer(rs.script[len(rs.script)-1])
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				cfg := b.eng.cfg
				cfg.Provider = providerAt(srv.URL())
				b.eng.cfg = cfg
				if _, err := b.Prompt(context.Background(), "And now?"); err != nil {
					t.Fatal(err)
				}
				return srv.Received()[0].Body
			}
			fresh := func() Config { c := r.cfg(); c.ConversationID = a.ConversationID(); return c }
			loaded, err := RestoreState(fresh(), a.LoopID(), history, 1, &decoded)
			if err != nil {
				t.Fatal(err)
			}
			loaded.RestoreUsage(a.Usage()) // as the session store does, from its stored turns
			// Both continuations see the same clock and ids.
			tick, ids := r.tick, r.ids
			want := next(a)
			r.tick, r.ids = tick, ids
			if got := next(loaded); !bytes.Equal(want, got) {
				i := 0
				for i < len(want) && i < len(got) && want[i] == got[i] {
					i++
				}
				t.Logf("first difference at byte %d: %q vs %q", i, got[max(0, i-80):min(len(got), i+80)], want[max(0, i-80):min(len(want), i+80)])
				t.Fatalf("request after restoring from the checkpoint differs from the uninterrupted loop's:\n%s\nwant\n%s", prompt.Preview(string(got), 300), prompt.Preview(string(want), 300))
			}
			if !decoded.fits(layout, history) {
				t.Fatalf("the checkpoint of layout %s does not fit the history it was taken of", layout)
			}
			if decoded.fits(layout, history[:len(history)-1]) || decoded.fits("other", history) {
				t.Fatal("a checkpoint fits another history or another layout")
			}
		})
	}
}

// history200 returns a 200-turn conversation cut from a train trajectory
// (its tool turns repeated with fresh tool_use ids when it has fewer).
func history200(b *testing.B) []llm.Message {
	tr, err := trajectory.Load(trainSessions(b, 1)[0])
	if err != nil {
		b.Fatal(err)
	}
	out := []llm.Message{tr.Messages[0]}
	for turn := 0; turn < 200; turn++ {
		i := turn % (len(tr.Calls) - 1)
		reply, result := tr.Reply(i), tr.Messages[tr.Calls[i].RawIndex]
		id := fmt.Sprintf("call_%03d", turn)
		reply.Content = append([]llm.Block(nil), reply.Content...)
		for k, bl := range reply.Content {
			if bl.Type == llm.BlockToolUse {
				reply.Content[k].ID = id
			}
		}
		result.Content = append([]llm.Block(nil), result.Content...)
		for k, bl := range result.Content {
			if bl.Type == llm.BlockToolResult {
				result.Content[k].ID = id
			}
		}
		out = append(out, reply, result)
	}
	return out
}

// BenchmarkRestore200Turns measures restoring a 200-turn session: replaying
// the layout over every stored request (Restore, one assembly per request:
// O(n²) in the history's length) against loading the checkpoint
// (RestoreState, O(n)), alternating the two in one run; x_replay is the
// replay's time over the checkpoint's.
func BenchmarkRestore200Turns(b *testing.B) {
	history := history200(b)
	for _, layout := range []string{"cachefit", "tiered", "panels", "flat"} {
		b.Run(layout, func(b *testing.B) {
			cfg := func() Config {
				l, err := prompt.Lookup(layout)
				if err != nil {
					b.Fatal(err)
				}
				return Config{Provider: providerAt("http://127.0.0.1:1"), Layout: l, Tools: toolsFor(), Model: "claude-sonnet-4-5"}
			}
			a, err := Restore(cfg(), "loop", history, 200)
			if err != nil {
				b.Fatal(err)
			}
			saved := a.Checkpoint()
			var replayT, loadT time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := Restore(cfg(), "loop", history, 200); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := RestoreState(cfg(), "loop", history, 200, &saved); err != nil {
					b.Fatal(err)
				}
				replayT, loadT = replayT+t1.Sub(t0), loadT+time.Since(t1)
			}
			b.ReportMetric(float64(replayT)/float64(loadT), "x_replay")
		})
	}
}

func providerAt(url string) llm.Provider {
	return anthropic.New(anthropic.Config{APIKey: "test", BaseURL: url})
}

func toolsFor() *tool.Registry { return tool.NewRegistry(tool.Builtins()...) }
