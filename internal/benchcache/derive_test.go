package benchcache

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/trajectory"
)

func loadTrain(t *testing.T) *trajectory.Trajectory {
	t.Helper()
	tr, err := trajectory.Load(shared.Path(t, "data/trajectories/mini-swe-agent/train/astropy__astropy-12907.traj.json"))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// The pacing model adds its pause before every Every-th call (and keeps it
// for every later call); a seed gives memoryless pauses at the same mean
// rate, the same for the same seed; Every < 0 keeps the recorded timing.
func TestPacedDerivation(t *testing.T) {
	tr := loadTrain(t)
	shift := func(d Derivation) []time.Duration {
		s, err := DeriveWith(tr, Paced, d)
		if err != nil {
			t.Fatal(err)
		}
		var out []time.Duration
		for i, c := range s.Calls {
			out = append(out, c.At.Sub(tr.Calls[i].Created))
			if c.Context.Now != c.At.UnixMilli() {
				t.Fatalf("call %d: Now %d, At %d", i, c.Context.Now, c.At.UnixMilli())
			}
		}
		return out
	}
	def := shift(Derivation{})
	for i, d := range def {
		if want := time.Duration(i/10) * 6 * time.Minute; d != want {
			t.Fatalf("default pacing, call %d shifted by %s; want %s", i, d, want)
		}
	}
	every3 := shift(Derivation{Pacing: Pacing{Every: 3, Length: 10 * time.Minute}})
	if every3[3] != 10*time.Minute || every3[2] != 0 || every3[6] != 20*time.Minute {
		t.Errorf("every 3 calls: %v", every3[:7])
	}
	for _, d := range shift(Derivation{Pacing: Pacing{Every: -1}}) {
		if d != 0 {
			t.Fatalf("no pauses, yet shifted by %s", d)
		}
	}
	s1, s1b, s2 := shift(Derivation{Pacing: Pacing{Every: 5, Length: time.Hour / 10, Seed: 1}}),
		shift(Derivation{Pacing: Pacing{Every: 5, Length: time.Hour / 10, Seed: 1}}),
		shift(Derivation{Pacing: Pacing{Every: 5, Length: time.Hour / 10, Seed: 2}})
	if !slices.Equal(s1, s1b) {
		t.Errorf("seeded pacing is not reproducible")
	}
	if slices.Equal(s1, s2) {
		t.Errorf("seeds 1 and 2 give the same pauses")
	}
	if s1[len(s1)-1] == 0 {
		t.Errorf("seed 1, 1 pause in 5 calls: no pause in %d calls", len(s1))
	}
	if _, err := DeriveWith(tr, Paced, Derivation{Pacing: Pacing{Every: 0, Length: time.Minute}}); err == nil {
		t.Error("a pause every 0 calls was accepted")
	}
}

// The parallel scenario merges up to k recorded tool calls into one
// response: every request is a valid conversation ending with a user
// message, no response carries more than k tool_use blocks, the last
// request holds every recorded tool call but the final one's, and the
// timeline is compressed by k.
func TestParallelDerivation(t *testing.T) {
	tr := loadTrain(t)
	for _, k := range []int{2, 8} {
		s, err := DeriveWith(tr, Parallel, Derivation{Parallel: k})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Calls) >= len(tr.Calls) || len(s.Calls) < len(tr.Calls)/k {
			t.Errorf("k=%d: %d calls from %d", k, len(s.Calls), len(tr.Calls))
		}
		maxUses := 0
		for i, c := range s.Calls {
			h := c.Context.History
			if err := prompt.CheckHistory(h); err != nil || h[len(h)-1].Role != llm.RoleUser {
				t.Fatalf("k=%d call %d: %v", k, i, err)
			}
			for _, m := range h {
				n := 0
				for _, b := range m.Content {
					if b.Type == llm.BlockToolUse {
						n++
					}
				}
				maxUses = max(maxUses, n)
			}
		}
		if maxUses != k {
			t.Errorf("k=%d: the largest response has %d tool_use blocks", k, maxUses)
		}
		uses := func(h []llm.Message) int {
			n := 0
			for _, m := range h {
				for _, b := range m.Content {
					if b.Type == llm.BlockToolUse {
						n++
					}
				}
			}
			return n
		}
		last := len(tr.Calls) - 1
		if got, want := uses(s.Calls[len(s.Calls)-1].Context.History), uses(tr.Request(last).Messages); got > want || got < want-k {
			t.Errorf("k=%d: the last request holds %d tool calls; the recording's last %d", k, got, want)
		}
		t0 := tr.Calls[0].Created
		if span, rec := s.Calls[len(s.Calls)-1].At.Sub(t0), tr.Calls[last].Created.Sub(t0); span > rec/time.Duration(k)+time.Second {
			t.Errorf("k=%d: timeline %s, recording %s", k, span, rec)
		}
	}
}

// --agent: a real kiro agent's prompt, tools, resources and skills are in
// every call, the recording's system prompt follows the agent's, and
// execute_bash is offered because the recording calls it.
func TestStaticContextOfARealAgent(t *testing.T) {
	st, err := LoadStatic(shared.Path(t, "data/agents/projects/johnmbergman__kiro-agents/.kiro/agents/researcher.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.StaticTokens() < 1024 {
		t.Errorf("static context of %d tokens: under Anthropic's minimum, the agent would not exercise system/tools breakpoints", st.StaticTokens())
	}
	tr := loadTrain(t)
	for _, sc := range Scenarios {
		s, err := DeriveWith(tr, sc, Derivation{Static: st})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range s.Calls {
			pc := c.Context
			if !strings.HasPrefix(pc.System, st.System) || !strings.HasSuffix(pc.System, tr.System) || len(pc.Files) < len(st.Files) {
				t.Fatalf("%s call %d: system/files not from the agent", sc, i)
			}
			bash := false
			for _, tl := range pc.Tools {
				bash = bash || tl.Name == "execute_bash"
			}
			if !bash || len(pc.Tools) != len(st.Tools) {
				t.Fatalf("%s call %d: tools %d, execute_bash %v", sc, i, len(pc.Tools), bash)
			}
		}
	}
	if _, err := LoadStatic("/nonexistent/agent.json"); err == nil || !strings.Contains(err.Error(), "--agent") {
		t.Errorf("missing agent file: %v", err)
	}
}
