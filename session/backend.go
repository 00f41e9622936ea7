package session

// What a Store implementation outside this package needs to give the same
// answers as SQLite and Memory (docs/sessions.md, "Writing a backend"): the
// rules every store applies — Step validation, loop chains, branch points,
// prefixes, pending calls, the content encoding, leases — exported once so
// that a backend (session/postgres) applies them rather than copying them.
// session/storetest checks the result.

import (
	"time"

	"github.com/strata-agent/strata/llm"
)

// Validate reports whether s is a valid Step (see Step); WriteStep must
// refuse an invalid one with this error, storing nothing.
func (s Step) Validate() error { return s.validate() }

// Describe names the step in errors: "turn N of loop L", or "step of loop L"
// for a step without a turn.
func (s Step) Describe() string { return s.what() }

// BuildRecord returns the LoopRecord of loop loopID (a full id) from all the
// loops, turns and message parts of its session: turns ordered by loop
// creation then index, parts by loop creation then Seq then Part (the order
// SessionDetail holds them in). It follows the loop's chain of
// Loop.PreviousLoopID; a chain that comes back on itself or names a missing
// loop is an error (ErrNotFound for the latter).
func BuildRecord(loops []Loop, turns []Turn, parts []Message, loopID string) (*LoopRecord, error) {
	byID := make(map[string]Loop, len(loops))
	for _, l := range loops {
		byID[l.ID] = l
	}
	chain, err := chainOf(byID, loopID)
	if err != nil {
		return nil, err
	}
	return recordOf(chain, byID, turns, parts), nil
}

// PendingCalls returns the tool_use blocks of h's last assistant message
// that no later tool_result answers, in call order (nil when none): what
// Store.Pending returns for a loop whose history is h.
func PendingCalls(h []llm.Message) []llm.Block { return pendingOf(h) }

// ResolvePrefix turns the ids a store found for id — id itself alone when it
// matched exactly, else up to two ids it is a prefix of, in id order — into
// the full id, or an error wrapping ErrNotFound (none) or ErrAmbiguous (two);
// what names the kind of id ("session", "loop").
func ResolvePrefix(what, id string, found []string) (string, error) { return resolved(what, id, found) }

// CheckBranchPoint applies Store.Branch's rule to turn turnIndex of loop l:
// status is the stored status of that turn of l, "" when l has none.
func CheckBranchPoint(l Loop, turnIndex int, status TurnStatus) error {
	return checkBranchPoint(l.ID, turnIndex, status, copiedUpTo(l))
}

// EncodeContent returns a message part's content as stored: a JSON array
// (never "null"), HTML characters unescaped, tool_use inputs compacted.
func EncodeContent(blocks []llm.Block) (string, error) { return encodeBlocks(blocks) }

// DecodeContent parses content stored by EncodeContent.
func DecodeContent(s string) ([]llm.Block, error) { return decodeBlocks(s) }

// NewSessionID returns a random 16-hex-digit id, what CreateSession gives a
// session without one.
func NewSessionID() string { return newID() }

// TitleLine returns what CreateSession stores as a title: the first
// non-blank line of s, trimmed, cut to 200 runes.
func TitleLine(s string) string { return firstLine(s) }

// CheckLease validates Acquire's arguments (session id, owner, ttl).
func CheckLease(sessionID, owner string, ttl time.Duration) error {
	return checkLease(sessionID, owner, ttl)
}

// LeaseBusy returns the error Acquire gives when session sessionID is held
// by holder until expires (now being the store's clock): it wraps ErrBusy and
// names both.
func LeaseBusy(sessionID, holder string, expires, now time.Time) error {
	return busyError(sessionID, holder, expires, now)
}

// HolderGone reports whether lease owner (a NewOwner id) is a process of
// this host that no longer runs: Acquire then takes its lease at once.
func HolderGone(owner string) bool { return holderDead(owner) }

// CheckTLDR validates SaveTLDR's arguments.
func CheckTLDR(sessionID, key string) error { return checkTLDR(sessionID, key) }
