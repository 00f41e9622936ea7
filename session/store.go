// Package session stores agent sessions: the sessions, the loops that run in
// them, each loop's turns (docs/turn.md: turn_id, triggered_by, usage, input
// messages, output message, tool results, started_at, ended_at), the
// loop's message history and the session's keep-alive pings (their cost,
// apart from every turn: docs/keepalive.md), behind the Store interface;
// plus a Recorder that materializes those records from the agent loop's
// events (docs/turn.md, "recorder").
//
// Which implementation to use:
//
//   - SQLite (Open, DefaultPath) is the default: a crash-safe file (pure Go,
//     modernc.org/sqlite, WAL mode) that several processes may share. Use it
//     whenever sessions must outlive the process — the CLI, ACP, resume and
//     branch.
//   - Memory (NewMemory) keeps everything in the process and loses it on exit.
//     Use it in tests and in embedders that need the session API (history,
//     pending tool calls, branch) without a file.
//   - PostgreSQL (package session/postgres) keeps sessions in a database
//     that several machines share (docs/sessions.md).
//
// All give the same answers for the same writes; one behavioural test suite,
// session/storetest, runs against each, and any other backend can run it.
//
// The Recorder writes one Step per completed step of a turn (model call, each
// tool result, turn end), and a Store applies a Step atomically, so a process
// killed mid-turn loses at most the step it was in. History returns a loop's
// messages exactly as agent.Agent.History() holds them, for resume; Pending
// lists the tool calls a crash left without results.
//
// Times are kept at millisecond precision in UTC; token counts are tokens.
// Every argument naming an existing session or loop may be a unique prefix of
// its id (like git), except in the Writer methods; an unknown id returns an
// error wrapping ErrNotFound, an ambiguous prefix one wrapping ErrAmbiguous.
package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/strata-agent/strata/llm"
)

// ErrNotFound is wrapped by errors about a session, loop or turn id that is not
// in the store.
var ErrNotFound = errors.New("not found")

// ErrAmbiguous is wrapped by errors about an id prefix that matches more than
// one session or loop.
var ErrAmbiguous = errors.New("ambiguous id prefix")

// ErrClosed is wrapped by the errors a Memory store returns after Close.
var ErrClosed = errors.New("store is closed")

// Store holds sessions, their loops, turns and message history: a Core plus
// every optional interface — Brancher, TLDRStore, Leaser and Pinger — as
// the CLI, ACP and strata.Workspace need. *SQLite, *Memory and the
// PostgreSQL store (session/postgres) implement it; session/storetest is the
// contract suite any implementation runs (docs/sessions.md).
//
// Contract, for every implementation (of Core and of the optional
// interfaces it has):
//   - Safe for concurrent use by several goroutines. A Step is atomic: a
//     reader sees all of it or none of it, and a failed WriteStep stores
//     nothing.
//   - Each method takes a context first; a cancelled context may make the call
//     fail with an error wrapping ctx.Err(), having stored nothing.
//   - Arguments naming a session or loop take the full id or a unique prefix;
//     unknown ids give errors wrapping ErrNotFound, ambiguous prefixes errors
//     wrapping ErrAmbiguous. Every error names the id it is about.
//   - Returned values belong to the caller: changing them does not change the
//     store. Message content round-trips through JSON (tool_use inputs come
//     back compacted, invalid UTF-8 in text is replaced), the same in every
//     implementation.
//   - After Close, every method fails.
type Store interface {
	Core
	Brancher
	TLDRStore
	Leaser
	Pinger
}

// Core is what every session store implements: sessions, their loops,
// history and pending calls, and the Recorder's write path. A backend may
// stop here; code that needs more type-asserts the optional interfaces
// (Brancher, TLDRStore, Leaser, Pinger), and the Recorder refuses a
// keep-alive ping for a store that is not a Pinger. The contract is
// Store's.
type Core interface {
	// CreateSession stores a new session described by meta (its Title cut to
	// its first line), with CreatedAt and UpdatedAt set to now, and returns
	// it. An empty meta.ID gets a random 16-hex-digit id. It fails when
	// meta.ID is already taken.
	CreateSession(ctx context.Context, meta SessionMeta) (Session, error)

	// ListSessions returns the sessions opts selects, most recently updated
	// first (then most recently created, then by id), each with its turn
	// count and usage summed over all its loops' turns.
	ListSessions(ctx context.Context, opts ListOptions) ([]SessionSummary, error)

	// LoadSession returns session id (or unique id prefix) with all its loops,
	// turns and stored message parts, read in one consistent snapshot.
	LoadSession(ctx context.Context, id string) (*SessionDetail, error)

	// LatestLoop returns the id of the session's loop that was active last
	// (the latest turn start, else the latest created; later-created first on
	// a tie), sub-agent loops excluded: the loop a resume continues. A session
	// without such a loop returns an error wrapping ErrNotFound.
	LatestLoop(ctx context.Context, sessionID string) (string, error)

	// History returns the conversation as agent.Agent.History() held it
	// after the loop's last stored step: the messages of the loops it
	// continues (its chain of Loop.PreviousLoopID, cut at a branch point),
	// then its own, in order, with a user message the loop merged (tool
	// results followed by the next prompt) rebuilt from its parts. A loop
	// with no message in its whole history returns an empty, non-nil
	// history.
	History(ctx context.Context, loopID string) ([]llm.Message, error)

	// Pending returns the tool_use blocks of the last assistant message of
	// the loop's history (see History) that have no stored tool_result yet, in call order: the calls
	// a crash cut off, which a resume runs before the next model call. It
	// returns nil when every call has a result or the history has no
	// assistant message.
	Pending(ctx context.Context, loopID string) ([]llm.Block, error)

	// NextTurnIndex returns the index the loop's next turn should get: one
	// past the highest turn index recorded in the loop itself (0 for a loop
	// without turns, such as a new branch: the turns of the loops it
	// continues are theirs). A resumed agent that finishes the loop's turn a
	// crash cut off continues numbering from there, so turn records never
	// collide; its next prompt starts a new loop at index 0.
	NextTurnIndex(ctx context.Context, loopID string) (int, error)

	Writer

	// Close releases the store. Recorders writing to it must not be used
	// afterwards.
	Close() error
}

// Brancher is the optional interface of stores that branch a conversation
// (`strata sessions branch`).
type Brancher interface {
	// Branch creates loop newLoopID in session sessionID whose history is loop
	// loopID's history up to and including turn turnIndex's messages (its
	// input, output and tool results; not a later message merged into the
	// same history message). Nothing is copied: the new loop continues
	// loopID (Loop.PreviousLoopID) cut at that turn, has trigger "branch",
	// records where it came from, and has no turn yet — its first turn is
	// index 0 (docs/turn.md, rule 3). The branch point must be a completed
	// turn of the loop itself (or, in a branch stored before schema version
	// 3, a turn it copied), else an error, wrapping ErrNotFound for a turn
	// that does not exist. loopID must belong to sessionID (else
	// ErrNotFound); newLoopID must be a new, non-empty id.
	Branch(ctx context.Context, sessionID, loopID string, turnIndex int, newLoopID string) error
}

// TLDRStore is the optional interface of stores that keep the model-written
// tl;drs of detached history chunks (docs/panels.md, "tl;dr").
type TLDRStore interface {
	// SaveTLDR stores text as the tl;dr of the message text whose TLDRKey
	// is key, in session sessionID (a full id): written by the loop's model
	// for a detached history chunk (compact.Summarizer), or "" when that
	// request failed and the chunk kept the full text. A key already stored
	// keeps its first text: the chunk that showed it is frozen. An unknown
	// session gives ErrNotFound; an empty id or key an error.
	SaveTLDR(ctx context.Context, sessionID, key, text string) error

	// TLDRs returns the tl;drs SaveTLDR stored for session sessionID (a
	// full id), by key; empty, not nil, when there are none (every session
	// of a file written before schema version 4). An unknown session gives
	// ErrNotFound.
	TLDRs(ctx context.Context, sessionID string) (map[string]string, error)
}

// Leaser is the optional interface of stores that keep a writer lease per
// session (Hold), so that two processes never interleave their steps.
type Leaser interface {
	// Acquire takes, or renews, the writer lease on session sessionID (a
	// full id) for owner until now+ttl: one writer per session at a time,
	// so two processes never interleave their steps in one history. It
	// succeeds when the session has no lease, owner holds it, the holder's
	// lease has expired, or the holder is a NewOwner id of a process on this
	// host that no longer runs (a holder that died); otherwise it fails
	// with an error wrapping ErrBusy naming the session and the holder. An
	// unknown session gives ErrNotFound; an empty owner or ttl ≤ 0 an error.
	// Hold wraps Acquire with renewal; WriteStep does not check leases
	// (holding one is the caller's protocol).
	Acquire(ctx context.Context, sessionID, owner string, ttl time.Duration) error

	// Release drops owner's lease on session sessionID; a lease held by
	// another owner (or none) is left alone, without error.
	Release(ctx context.Context, sessionID, owner string) error
}

// Pinger is the optional interface of stores that keep a session's
// keep-alive pings (docs/keepalive.md).
type Pinger interface {
	// AddPing stores keep-alive ping p of session sessionID (a full id):
	// its cost, apart from every turn (SessionDetail.Pings, SessionSummary
	// .Pings). It touches no loop, turn, message or the session's UpdatedAt
	// (a ping is no activity of the user's). An unknown session gives an
	// error wrapping ErrNotFound.
	AddPing(ctx context.Context, sessionID string, p Ping) error
}

// Writer is the write path of a Recorder. The Recorder owns the logic — which
// event completes which step, where a message part goes in the history, how
// tool results complete a turn, usage and statuses — and hands the Writer one
// Step per completed step; a Writer only stores what it is given. Ids here are
// full ids, never prefixes, so a recorder never writes into a loop it merely
// shares a prefix with.
type Writer interface {
	// ReadLoop returns everything stored about loop loopID (a full id). An
	// unknown loop returns an error wrapping ErrNotFound.
	ReadLoop(ctx context.Context, loopID string) (*LoopRecord, error)

	// WriteStep applies s atomically, in the order of Step's fields: all of
	// it or, on error, none of it. It fails when s is invalid (see Step),
	// when the session does not exist (ErrNotFound), when the loop belongs to
	// another session, when InsertTurn or an Insert part is already stored,
	// or when UpdateTurn or a Replace part is not (ErrNotFound).
	WriteStep(ctx context.Context, s Step) error
}

// ListOptions selects the sessions ListSessions returns.
type ListOptions struct {
	// Limit is the most sessions returned; ≤ 0 returns all.
	Limit int
	// Cwd, when set, keeps only sessions whose working directory
	// (SessionMeta.Cwd) equals it byte for byte.
	Cwd string
}

// LoopRecord is everything stored about one loop (Writer.ReadLoop).
type LoopRecord struct {
	Loop
	Turns    []Turn    // by turn index
	Messages []Message // by Seq, then Part
	// Before are the loops this loop continues, oldest first: its chain of
	// Loop.PreviousLoopID, each with the turns and message parts the loop's
	// history takes from it (those up to BranchedFromTurn for the loop a
	// branch was taken from; their own Before is empty). The loop's history
	// is the parts of Before, in order, then Messages.
	Before []LoopRecord
}

// Parts returns the message parts of the loop's whole history: those of
// Before, in order, then its own.
func (r *LoopRecord) Parts() []Message {
	var out []Message
	for _, b := range r.Before {
		out = append(out, b.Messages...)
	}
	return append(out, r.Messages...)
}

// History returns the conversation the loop's whole history holds (its
// Parts as Store.History returns them).
func (r *LoopRecord) History() []llm.Message { return historyOf(r.Parts()) }

// ConversationID returns the id of the first loop of r's chain (Before[0],
// else r itself): the conversation the loop belongs to, which every loop of
// a session's prompts shares (agent.Config.ConversationID).
func (r *LoopRecord) ConversationID() string {
	if len(r.Before) > 0 {
		return r.Before[0].ID
	}
	return r.ID
}

// link is one loop of a chain and the last turn index the chain takes from
// it (cut < 0: every turn).
type link struct {
	id  string
	cut int
}

// chainOf returns the chain of loop id — the loops it continues, following
// Loop.PreviousLoopID, oldest first, then id itself with cut -1 — from the
// session's loops by id. A chain that comes back to a loop is an error.
func chainOf(loops map[string]Loop, id string) ([]link, error) {
	out := []link{{id: id, cut: -1}}
	seen := map[string]bool{id: true}
	for l := loops[id]; l.PreviousLoopID != ""; l = loops[l.PreviousLoopID] {
		cut := -1
		if l.BranchedFromLoop == l.PreviousLoopID {
			cut = l.BranchedFromTurn
		}
		if seen[l.PreviousLoopID] {
			return nil, fmt.Errorf("loop %s: its chain of previous loops comes back to loop %s", id, l.PreviousLoopID)
		}
		seen[l.PreviousLoopID] = true
		if _, ok := loops[l.PreviousLoopID]; !ok {
			return nil, fmt.Errorf("loop %s: previous loop %s: %w", l.ID, l.PreviousLoopID, ErrNotFound)
		}
		out = append(out, link{id: l.PreviousLoopID, cut: cut})
	}
	slices.Reverse(out)
	return out, nil
}

// recordOf builds the LoopRecord of the last loop of chain from the
// session's loops, turns and parts (each in loop, then index or Seq/Part,
// order): Before gets each earlier link's turns and parts up to its cut.
func recordOf(chain []link, loops map[string]Loop, turns []Turn, parts []Message) *LoopRecord {
	recs := make([]LoopRecord, len(chain))
	at := map[string]int{}
	for i, c := range chain {
		recs[i].Loop = loops[c.id]
		at[c.id] = i
	}
	take := func(loopID string, turn int) (int, bool) {
		i, ok := at[loopID]
		return i, ok && (chain[i].cut < 0 || turn <= chain[i].cut)
	}
	for _, t := range turns {
		if i, ok := take(t.LoopID, t.Index); ok {
			recs[i].Turns = append(recs[i].Turns, t)
		}
	}
	for _, m := range parts {
		if i, ok := take(m.LoopID, m.TurnIndex); ok {
			recs[i].Messages = append(recs[i].Messages, m)
		}
	}
	last := recs[len(recs)-1]
	last.Before = recs[:len(recs)-1]
	if len(last.Before) == 0 {
		last.Before = nil
	}
	return &last
}

// Step is one atomic write: what one completed step of a turn changes. Its
// parts apply in field order:
//
//  1. session SessionID (must exist): UpdatedAt becomes the later of itself
//     and Time (a zero Time leaves it); Title becomes its title if it has
//     none;
//  2. Loop, when set: loop LoopID is created in the session with Loop's
//     Trigger, CreatedAt and PreviousLoopID (which must name a loop of the
//     session) unless it exists; it must belong to the session;
//  3. InsertTurn is stored as a new turn, or UpdateTurn's Status, StopReason,
//     Error, Usage and EndedAt replace the stored turn's (at most one of the
//     two);
//  4. DropOutput deletes UpdateTurn's output and tool_results parts (a
//     failed turn keeps only its input);
//  5. Insert parts are stored (each (Seq, Part) must be free); Replace parts
//     replace the content of the stored part at their (Seq, Part);
//  6. ChildLoopID, when set, names a loop of the session without a parent
//     whose parent becomes LoopID (a sub-agent loop); another loop is left
//     alone.
//
// A Step is valid when SessionID and LoopID are set, every Turn and Message in
// it has the Step's LoopID, turns have a known TurnStatus and messages a
// known Role (user, assistant) and MessageKind; WriteStep refuses others.
// The Recorder builds Steps; other code rarely needs to.
type Step struct {
	SessionID   string    // full id of the session the step belongs to
	LoopID      string    // full id of the loop written to
	Time        time.Time // the step's event time (UTC, kept in ms)
	Title       string    // the session's title, if it has none yet; "" = none
	Loop        *Loop     // create the loop if missing: only Trigger, CreatedAt and PreviousLoopID are read
	InsertTurn  *Turn     // a new turn record (every field stored)
	UpdateTurn  *Turn     // the outcome of a stored turn (LoopID and Index name it)
	DropOutput  bool      // delete UpdateTurn's output and tool_results parts
	Insert      []Message // new message parts
	Replace     []Message // new content for stored parts (Seq and Part name them)
	ChildLoopID string    // a sub-agent loop started by this step's tool call; "" = none
}

// validate checks the invariants every Writer relies on.
func (s Step) validate() error {
	switch {
	case s.SessionID == "":
		return errors.New("step: session id is empty")
	case s.LoopID == "":
		return errors.New("step: loop id is empty")
	case s.InsertTurn != nil && s.UpdateTurn != nil:
		return fmt.Errorf("step of loop %s: both InsertTurn and UpdateTurn are set; set at most one", s.LoopID)
	case s.DropOutput && s.UpdateTurn == nil:
		return fmt.Errorf("step of loop %s: DropOutput needs UpdateTurn to name the turn", s.LoopID)
	}
	for _, t := range []*Turn{s.InsertTurn, s.UpdateTurn} {
		if t == nil {
			continue
		}
		if t.LoopID != s.LoopID {
			return fmt.Errorf("step of loop %s: turn %d has loop id %q", s.LoopID, t.Index, t.LoopID)
		}
		switch t.Status {
		case TurnInProgress, TurnCompleted, TurnFailed:
		default:
			return fmt.Errorf("step of loop %s: turn %d has status %q (valid: in_progress, completed, failed)", s.LoopID, t.Index, t.Status)
		}
	}
	for _, ms := range [][]Message{s.Insert, s.Replace} {
		for _, m := range ms {
			if m.LoopID != s.LoopID {
				return fmt.Errorf("step of loop %s: message %d.%d has loop id %q", s.LoopID, m.Seq, m.Part, m.LoopID)
			}
			if m.Role != llm.RoleUser && m.Role != llm.RoleAssistant {
				return fmt.Errorf("step of loop %s: message %d.%d has role %q (valid: user, assistant)", s.LoopID, m.Seq, m.Part, m.Role)
			}
			switch m.Kind {
			case KindInput, KindOutput, KindToolResults:
			default:
				return fmt.Errorf("step of loop %s: message %d.%d has kind %q (valid: input, output, tool_results)", s.LoopID, m.Seq, m.Part, m.Kind)
			}
		}
	}
	return nil
}

// what names the step in errors: its loop and turn.
func (s Step) what() string {
	t := s.InsertTurn
	if t == nil {
		t = s.UpdateTurn
	}
	if t == nil {
		return "step of loop " + s.LoopID
	}
	return fmt.Sprintf("turn %d of loop %s", t.Index, s.LoopID)
}

// resolved turns the ids matching id (an exact match alone, else up to two
// prefix matches in id order) into the resolved id or an ErrNotFound /
// ErrAmbiguous error; what is "session" or "loop".
func resolved(what, id string, found []string) (string, error) {
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s %s: %w", what, id, ErrNotFound)
	case 1:
		return found[0], nil
	default:
		return "", fmt.Errorf("%s %s matches %s, %s, …: %w", what, id, found[0], found[1], ErrAmbiguous)
	}
}

// copiedUpTo returns the last turn index whose messages branch loop l holds
// as a copy: a branch stored before schema version 3 (BranchedFromTurn, no
// PreviousLoopID); -1 for any other loop.
func copiedUpTo(l Loop) int {
	if l.PreviousLoopID == "" && l.BranchedFromLoop != "" {
		return l.BranchedFromTurn
	}
	return -1
}

// checkBranchPoint applies Branch's rule to turn turnIndex of loop lid:
// status is the turn's stored status ("" when the loop has no such turn) and
// inherited is copiedUpTo of the loop.
func checkBranchPoint(lid string, turnIndex int, status TurnStatus, inherited int) error {
	switch {
	case turnIndex < 0:
		return fmt.Errorf("session: branch loop %s at turn %d: turn index is negative", lid, turnIndex)
	case status == "":
		if turnIndex > inherited {
			return fmt.Errorf("session: branch loop %s at turn %d: %w", lid, turnIndex, ErrNotFound)
		}
	case status != TurnCompleted:
		return fmt.Errorf("session: branch loop %s at turn %d: turn is %s, want completed", lid, turnIndex, status)
	}
	return nil
}

// historyOf rebuilds a loop's history from its stored parts, ordered by Seq
// then Part: the parts of one Seq are one message. It never returns nil.
func historyOf(parts []Message) []llm.Message {
	h := []llm.Message{}
	for i, p := range parts {
		if i > 0 && parts[i-1].Seq == p.Seq {
			h[len(h)-1].Content = append(h[len(h)-1].Content, p.Content...)
			continue
		}
		h = append(h, llm.Message{Role: p.Role, Content: p.Content})
	}
	return h
}

// pendingOf returns the tool_use blocks of h's last assistant message that no
// later tool_result answers, in call order (nil when none).
func pendingOf(h []llm.Message) []llm.Block {
	last := -1
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == llm.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	answered := map[string]bool{}
	for _, m := range h[last+1:] {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult {
				answered[b.ID] = true
			}
		}
	}
	var out []llm.Block
	for _, c := range h[last].ToolUses() {
		if !answered[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// TurnRef names one turn of a conversation: its loop and its index there.
type TurnRef struct {
	LoopID string
	Index  int
}

// Numbered returns the turns of the loop's whole conversation numbered
// across it, as one loop per session numbered them before schema version 3
// and as `strata sessions branch --turn N` counts: element n is turn n of
// the conversation. Each loop of the chain (Before, then the loop) continues
// from the previous one's last number: a loop a branch was taken from
// counts up to the branch turn, any other up to its highest turn index
// (turns or message parts, so the turns a pre-v3 branch copied keep their
// numbers).
func (r *LoopRecord) Numbered() []TurnRef {
	var out []TurnRef
	links := append(slices.Clone(r.Before), LoopRecord{Loop: r.Loop, Turns: r.Turns, Messages: r.Messages})
	for i, l := range links {
		n := -1
		if i+1 < len(links) && links[i+1].BranchedFromLoop == l.ID && links[i+1].PreviousLoopID == l.ID {
			n = links[i+1].BranchedFromTurn
		} else {
			for _, t := range l.Turns {
				n = max(n, t.Index)
			}
			for _, m := range l.Messages {
				n = max(n, m.TurnIndex)
			}
		}
		for j := 0; j <= n; j++ {
			out = append(out, TurnRef{LoopID: l.ID, Index: j})
		}
	}
	return out
}
