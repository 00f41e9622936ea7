package session

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// SessionMeta describes a session when it is created. Every field is optional.
type SessionMeta struct {
	// ID is the session id; CreateSession picks a random 16-hex-digit one
	// when empty.
	ID string
	// Title is a one-line label; when empty the Recorder sets it to the first
	// line of the session's first prompt.
	Title     string
	Cwd       string // working directory the session runs in
	AgentFile string // path of the agent definition file, if any
	Provider  string // provider id, e.g. "anthropic"
	Model     string // model id
	Layout    string // prompt layout name
}

// Session is a stored session's metadata.
type Session struct {
	SessionMeta
	CreatedAt time.Time // UTC, millisecond precision
	UpdatedAt time.Time // last write by CreateSession, Branch or a Recorder (Step.Time)
}

// SessionSummary is one line of ListSessions.
type SessionSummary struct {
	ID        string
	Title     string
	Cwd       string // the session's working directory (SessionMeta.Cwd)
	CreatedAt time.Time
	UpdatedAt time.Time
	Loops     int       // loops of the session, sub-agents' and branches' included
	Turns     int       // turns recorded in all the session's loops, any status
	Usage     llm.Usage // summed over those turns, tokens (keep-alive pings not included)
	// Pings are the session's stored keep-alive pings: how many, and their
	// tokens, apart from Usage (the session cost Usage + Pings.Usage).
	Pings PingTotals
}

// Ping is one keep-alive ping the runtime sent while the session idled
// (docs/keepalive.md): the session's last request sent again with
// max_tokens 1, so that the provider's prompt cache is read instead of
// lost. It costs what its usage says (mostly cache reads) but is never a
// turn and never part of the history; it is stored only for its cost.
type Ping struct {
	At    time.Time // when its answer arrived (the event's time), UTC, millisecond precision
	Usage llm.Usage // the ping's tokens
}

// PingTotals sums a session's stored pings: how many, and their usage in
// tokens.
type PingTotals struct {
	Count int
	Usage llm.Usage
}

// Add returns t with ping p counted.
func (t PingTotals) Add(p Ping) PingTotals {
	return PingTotals{Count: t.Count + 1, Usage: t.Usage.Add(p.Usage)}
}

// Loop is one agent loop of a session: one user prompt's turns (docs/turn.md,
// rules 2 and 18: a loop per user prompt, a turn never spans loops).
type Loop struct {
	ID           string // the agent's loop id
	SessionID    string
	ParentLoopID string // the loop whose tool call started this sub-agent loop; "" otherwise
	// PreviousLoopID is the loop this one continues: the loop of the
	// conversation's previous user prompt, or, for a branch, the loop it was
	// taken from (BranchedFromLoop). The loop's history starts with that
	// loop's (up to BranchedFromTurn for a branch) and its message positions
	// (Message.Seq) go on from there. "" for a conversation's first loop, a
	// sub-agent loop, and every loop stored before schema version 3 (whose
	// history is all its own).
	PreviousLoopID string
	// BranchedFromLoop and BranchedFromTurn say where a branch loop's history
	// was taken from: the history up to and including that turn of that loop;
	// "" and -1 when the loop is not a branch. (A branch stored before
	// schema version 3 holds a copy of that history, with the turn indexes
	// it had in that loop.)
	BranchedFromLoop string
	BranchedFromTurn int
	Trigger          event.Trigger // trigger of the loop's first turn ("branch" for Branch)
	CreatedAt        time.Time
}

// TurnStatus is where a recorded turn is in its life.
type TurnStatus string

// Turn statuses.
const (
	// TurnInProgress: the model call completed and was stored; the turn's
	// tools may not all have run (a crash leaves a turn in this state).
	TurnInProgress TurnStatus = "in_progress"
	TurnCompleted  TurnStatus = "completed" // turn_end arrived without an error
	TurnFailed     TurnStatus = "failed"    // turn_end carried an error; no output is kept
)

// Turn is one recorded turn (docs/turn.md, "turn header"): one model call and the tool
// calls it asked for. Its messages are the Messages with the same LoopID and
// TurnIndex.
type Turn struct {
	LoopID        string
	Index         int // zero-based turn index in the loop
	TriggeredBy   event.Trigger
	CorrelationID string // ties the turn to its user turn's events
	Status        TurnStatus
	StopReason    llm.StopReason
	Error         string    // the failure, for TurnFailed
	Usage         llm.Usage // tokens of the turn's model call and of the tl;dr requests its compaction made
	StartedAt     time.Time // turn_start time
	EndedAt       time.Time // turn_end time; zero while in progress
}

// MessageKind says what part of a turn a stored message part is.
type MessageKind string

// Message kinds.
const (
	KindInput       MessageKind = "input"        // a user prompt (or steering message) fed into the turn
	KindOutput      MessageKind = "output"       // the turn's assistant message
	KindToolResults MessageKind = "tool_results" // the turn's tool_result blocks
)

// Message is one stored part of a loop's history. Seq is the position of the
// history message it belongs to in the whole conversation: a loop's first
// message goes on from the last Seq of the loop it continues
// (Loop.PreviousLoopID), or shares it when merged into it. The loop merges a prompt into a preceding
// user message (tool results, or the prompt of a failed turn), so one history
// message may have several parts, ordered by Part, each from its own turn.
type Message struct {
	LoopID    string
	Seq       int
	Part      int
	TurnIndex int
	Kind      MessageKind
	Role      llm.Role
	Content   []llm.Block
}

// SessionDetail is everything stored about a session.
type SessionDetail struct {
	Session
	Loops    []Loop    // by creation time
	Turns    []Turn    // by loop (in Loops order), then turn index
	Messages []Message // by loop (in Loops order), then Seq, then Part
	Pings    []Ping    // the session's keep-alive pings, in the order stored (Writer.AddPing)
}

// PingTotals returns the count and summed usage of d's pings.
func (d *SessionDetail) PingTotals() PingTotals {
	var t PingTotals
	for _, p := range d.Pings {
		t = t.Add(p)
	}
	return t
}

// encodeBlocks returns blocks as a JSON array (never "null"). HTML characters
// are not escaped; tool_use inputs are stored compacted (insignificant
// whitespace dropped, as encoding/json does for json.RawMessage).
func encodeBlocks(blocks []llm.Block) (string, error) {
	if blocks == nil {
		blocks = []llm.Block{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(blocks); err != nil {
		return "", fmt.Errorf("encode content: %w", err)
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// decodeBlocks parses a content column.
func decodeBlocks(s string) ([]llm.Block, error) {
	var out []llm.Block
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("decode content: %w", err)
	}
	return out, nil
}

// firstLine returns the first non-blank line of s, trimmed and cut to 200
// runes.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if r := []rune(l); len(r) > 200 {
				l = string(r[:200])
			}
			return l
		}
	}
	return ""
}

// newID returns a random 16-hex-digit id (the shape of agent.NewID).
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ms converts t to Unix milliseconds; the zero time is stored as 0.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMS converts Unix milliseconds to a UTC time; 0 is the zero time.
func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
