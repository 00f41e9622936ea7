package benchcache

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/trajectory"
)

// Derivation holds the parameters of the scenarios that add to the recording:
// the pacing model (Paced), the fan-out of parallel tool calls (Parallel) and
// a real agent's static context (every scenario). The zero value gives the
// defaults.
type Derivation struct {
	// Pacing is the idle-gap model of the paced scenario.
	Pacing Pacing
	// Parallel is how many consecutive recorded tool calls one response
	// carries in the parallel scenario (0 = DefaultParallel; ≥ 2).
	Parallel int
	// Static, when set, is a real agent's static context every call carries
	// (LoadStatic); nil = the recording's own (its system prompt and the one
	// execute_bash tool).
	Static *Static
}

// DefaultParallel is the default number of tool calls merged into one
// response (Parallel scenario).
const DefaultParallel = 8

// Pacing is the seeded model of a person's idle gaps between calls (Paced
// scenario): a pause of Length is added before call i (0-based, i ≥ 1), and
// to every call after it, when
//
//   - Seed = 0: i is a multiple of Every (a pause after every Every-th call);
//   - Seed ≠ 0: a draw that is true with probability 1/Every, from a
//     splitmix64 hash of Seed, the session name and i (memoryless pauses at
//     the same mean rate; the same seed always gives the same pauses).
//
// Every = 0 with Length = 0 is the default (DefaultPauseEvery,
// DefaultPauseLength); Every < 0 means no pauses (the recorded timing).
type Pacing struct {
	Every  int           // calls between pauses (mean, when seeded)
	Length time.Duration // added idle time per pause
	Seed   uint64
}

// The default pacing: a 6-minute pause after every 10th call (a person
// reading the agent's work, a coffee): longer than Anthropic's 5-minute
// default TTL, far shorter than its 1-hour one.
const (
	DefaultPauseEvery  = 10
	DefaultPauseLength = 6 * time.Minute
)

func (d Derivation) withDefaults() Derivation {
	if d.Pacing.Every == 0 && d.Pacing.Length == 0 {
		d.Pacing.Every, d.Pacing.Length = DefaultPauseEvery, DefaultPauseLength
	}
	if d.Parallel == 0 {
		d.Parallel = DefaultParallel
	}
	return d
}

func (d Derivation) check() error {
	switch {
	case d.Pacing.Every == 0:
		return fmt.Errorf("pacing: pause every 0 calls: want ≥ 1 (or < 0 for no pauses)")
	case d.Pacing.Length < 0:
		return fmt.Errorf("pacing: pause length %s is negative", d.Pacing.Length)
	case d.Parallel < 2:
		return fmt.Errorf("parallel: %d tool calls per response: want ≥ 2", d.Parallel)
	}
	return nil
}

// pauseBefore reports whether the model pauses before call i of session
// name (see Pacing).
func (p Pacing) pauseBefore(name string, i int) bool {
	if p.Every < 0 || i <= 0 {
		return false
	}
	if p.Seed == 0 {
		return i%p.Every == 0
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	x := splitmix(p.Seed ^ splitmix(h.Sum64()^uint64(i)))
	return x < ^uint64(0)/uint64(p.Every)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Static is the static context of a real agent: what every request of a
// session carries besides the conversation. LoadStatic builds it from a kiro
// agent file.
type Static struct {
	// Name is the agent's name (for reports).
	Name string
	// System is the agent's prompt; the recording's system prompt follows it
	// (the recorded conversation needs its instructions).
	System string
	// Tools are the specs the agent offers, in its order; execute_bash, which
	// the recording calls, is added when missing.
	Tools []llm.ToolSpec
	// Files are the agent's file:// resources and always-included steering.
	Files []prompt.File
	// Skills are the agent's skill:// resources (metadata).
	Skills []prompt.Skill
	// MCPTools is how many of Tools (the last ones) are recorded MCP tools
	// (StaticOptions.MCPTools).
	MCPTools int
}

// context is the prompt.Context of one call of the named session: the
// static context (or the recording's alone when s is nil) around history,
// sent at at; the session name is the conversation id (the peers that send a
// prompt_cache_key use it).
func (s *Static) context(session, recordedSystem string, history []llm.Message, at time.Time) prompt.Context {
	pc := prompt.Context{System: recordedSystem, Tools: []llm.ToolSpec{bashSpec}, History: history, Now: at.UnixMilli(),
		ConversationID: session}
	if s == nil {
		return pc
	}
	if s.System != "" {
		pc.System = s.System + "\n\n" + recordedSystem
	}
	pc.Tools = s.Tools
	pc.Files = append([]prompt.File(nil), s.Files...)
	pc.Skills = s.Skills
	return pc
}

// mergeParallel derives the parallel scenario: consecutive tool calls of the
// recording (an assistant message with a tool_use answered by a tool_result)
// are merged, up to d.Parallel at a time, into one call whose response holds
// all their blocks (texts and tool_use, in order) and whose next user message
// holds all their tool_results — what a model that calls tools in parallel
// sends. A call that is not a tool call (a format error and its reply) stays
// a call of its own. The k tools of a response run side by side, so the
// timeline is compressed by k: merged call g is sent at t₀ + (tₐ − t₀)/k, tₐ
// being the recorded time of its first call. Output tokens are summed;
// recorded usage is dropped (it priced other requests).
func mergeParallel(t *trajectory.Trajectory, d Derivation, out *Session) (*Session, error) {
	msgs := t.Messages
	n := len(t.Calls)
	if n == 0 {
		return out, nil
	}
	r := make([]int, n) // r[i]: index of call i's reply in msgs
	for i, c := range t.Calls {
		r[i] = c.RawIndex - 1
		if r[i] < 1 || r[i] >= len(msgs) {
			return nil, fmt.Errorf("%s: call %d has no request", t.Path, i)
		}
	}
	isTool := func(i int) bool {
		if r[i]+1 >= len(msgs) || msgs[r[i]+1].Role != llm.RoleUser {
			return false
		}
		hasUse := false
		for _, b := range msgs[r[i]].Content {
			hasUse = hasUse || b.Type == llm.BlockToolUse
		}
		for _, b := range msgs[r[i]+1].Content {
			if b.Type != llm.BlockToolResult {
				return false
			}
		}
		return hasUse
	}
	t0 := t.Calls[0].Created
	k := d.Parallel
	hist := append([]llm.Message(nil), msgs[:r[0]]...)
	for a := 0; a < n; {
		b := a
		for b+1 < n && b-a+1 < k && isTool(b) && isTool(b+1) && r[b+1] == r[b]+2 {
			b++
		}
		at := t0.Add(t.Calls[a].Created.Sub(t0) / time.Duration(k))
		var output int64
		for c := a; c <= b; c++ {
			output += t.Calls[c].Usage.CompletionTokens
		}
		pc := d.Static.context(t.InstanceID, t.System, hist[:len(hist):len(hist)], at)
		out.Calls = append(out.Calls, Call{Context: pc, At: at, Output: output})
		// The merged response and its results join the history.
		var asst, user []llm.Block
		for c := a; c <= b; c++ {
			asst = append(asst, msgs[r[c]].Content...)
			if isTool(c) {
				user = append(user, msgs[r[c]+1].Content...)
			}
		}
		if b+1 >= n {
			break
		}
		next := r[b+1]
		if a == b && !isTool(a) {
			hist = append(hist, msgs[r[a]:next]...)
		} else {
			hist = append(hist, llm.Message{Role: llm.RoleAssistant, Content: asst}, llm.Message{Role: llm.RoleUser, Content: user})
			hist = append(hist, msgs[r[b]+2:next]...)
		}
		a = b + 1
	}
	return out, nil
}
