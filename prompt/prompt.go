// Package prompt turns what an agent knows for one turn (prompt.Context) into
// the request a provider sends (llm.Request), through a Layout. A layout
// decides the order of system text, context, tools and history, and where the
// cache breakpoints sit; it also returns a Breakdown that explains what it
// built, span by span, for `strata render --explain`.
//
// Layout profiles live in subpackages: prompt/flat (the naive baseline), the
// profiles of other systems' designs, and strata's own cachefit (docs/README.md).
package prompt

import (
	"fmt"
	"sort"
	"strings"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/token"
)

// Context is everything a layout may place in one request. The loop fills it
// every turn; layouts must not modify it.
type Context struct {
	Model     string         // model id sent to the provider
	MaxTokens int64          // output cap in tokens; 0 = provider default
	System    string         // the agent's system instructions ("" = none)
	Tools     []llm.ToolSpec // tool specs available this turn, in registry order
	// History is the conversation so far, oldest first, ending with the
	// message that prompts this turn (a user message or tool results).
	History []llm.Message

	// Summary is the latest conversation summary from compaction ("" = none).
	Summary string
	// Knowledge is the knowledge-base listing (indexed contexts) ("" = none).
	Knowledge string
	// Task is the active task / spec context ("" = none).
	Task string
	// HookOutputs are the outputs of the agent's context hooks (kiro
	// agentSpawn and userPromptSubmit), in the order the hooks ran.
	HookOutputs []string
	// Files are context files (agent file:// resources, steering files,
	// working files), in the order the agent config lists them.
	Files []File
	// Skills are the skill:// resources: metadata only, the model reads the
	// full SKILL.md on demand.
	Skills []Skill

	// FileTree is the project's file list, one path per line ("" = none).
	// The runtime fills it only for layouts whose Needs ask for it.
	FileTree string
	// Reminder is appended to the current prompt, closest to where the
	// model generates (docs/tiered.md, rule 8; "" = none). The runtime
	// fills it only for layouts whose Needs ask for it.
	Reminder string
	// Symbols is the repository's symbol map (nil = none): a legend and
	// one compact block per source file. Filled only for layouts whose
	// Needs ask for it.
	Symbols *SymbolMap
	// URLs are the documents fetched from URLs the user passed, in the
	// order given (nil = none).
	URLs []URLDoc
	// Review is the code review context: summary, commit log and diffs
	// against the base the user named ("" = no review mode).
	Review string

	// API is the wire API the request is for ("" = llm.APIAnthropic). The
	// loop sets it from llm.Provider.API. Layouts may differ per family
	// (Context Pilot re-injects the system prompt on Anthropic only).
	API llm.API
	// ConversationID identifies the conversation the request belongs to:
	// agent.Config.ConversationID, the id of the conversation's first loop,
	// which every prompt's loop of the session keeps, a resumed session too,
	// and a branch as well (it shares the conversation's prefix). The loop
	// sets it every turn; "" = unknown. Layouts
	// that reproduce an agent sending OpenAI's prompt_cache_key per session
	// or conversation (prompt/peers: opencode, openhands, codex) copy it into
	// llm.Request.PromptCacheKey; the others ignore it.
	ConversationID string
	// Now is the request time in Unix milliseconds, for layouts that print
	// timestamps (panels). The loop sets it; 0 renders as unknown. Passing it
	// in keeps Assemble deterministic.
	Now int64
	// Counter counts the tokens reported in the Breakdown (nil = the fast
	// token.Estimator; token.ForModel gives exact BPE counts). It never
	// changes the request.
	Counter token.Counter

	// Panel sources: state the runtime and the loop gather for layouts that
	// show Context Pilot's fixed panels (docs/panels.md, "fixed panels").
	// Other layouts ignore them.

	// Todos are the todo_list tool's lists as of this request (files under
	// tool.TodoDir), sorted by ID (nil = none). The runtime reads them
	// before every request.
	Todos []Todo
	// Agents are the agent files the workspace can run (the library panel),
	// in FindAgents order (nil = none).
	Agents []LibraryEntry
	// Usage is what the loop's model calls used so far, summed over every
	// call before this request (the statistics panel). The loop sets it.
	Usage llm.Usage
	// Logs are the loop's log entries so far, oldest first (nil = none).
	Logs []LogEntry
	// Results are panels of command output the runtime gathers for the
	// panels layout (docs/panels.md, rule 5: Context Pilot's "Git results"
	// and "Console"), in a fixed order (nil = none).
	Results []Result
	// Detached are the conversation history chunks compaction cut from the
	// live conversation, oldest first (nil = none). Their texts are also
	// joined into Summary after the template summary (JoinSummary), so
	// layouts without history panels still place them; layouts that show
	// each chunk as its own panel use OwnSummary for the rest.
	Detached []Detached
}

// Todo is one todo_list list: its id, description and tasks.
type Todo struct {
	ID          string
	Description string
	Tasks       []TodoTask
	// Changed is when the list's file last changed (Unix ms; 0 = unknown).
	Changed int64
}

// TodoTask is one task of a Todo.
type TodoTask struct {
	Task string
	Done bool
}

// LibraryEntry is one item of the library panel: an agent (or command)
// with its description and where it is defined.
type LibraryEntry struct {
	Name        string
	Description string
	Path        string // as shown to the model
}

// Result is one panel of command output: Key identifies it across
// requests (it keeps its panel id), Header names it, Content is the
// output, Refreshed is when the output last changed (Unix ms; 0 = let the
// layout date it by content change).
type Result struct {
	Key, Header, Content string
	Refreshed            int64
}

// LogEntry is one timestamped line of the loop's log.
type LogEntry struct {
	At   int64 // Unix ms
	Text string
}

// Detached is one conversation history chunk: the frozen text of the
// messages First..Last (0-based indexes in the whole conversation) and
// when it was detached (Unix ms; 0 = unknown).
type Detached struct {
	First, Last int
	At          int64
	Text        string
}

// JoinSummary returns the summary a context carries for layouts without
// history panels: the template summary, then every detached chunk's text,
// separated by blank lines.
func JoinSummary(summary string, detached []Detached) string {
	parts := make([]string, 0, len(detached)+1)
	if summary != "" {
		parts = append(parts, summary)
	}
	for _, d := range detached {
		parts = append(parts, d.Text)
	}
	return strings.Join(parts, "\n\n")
}

// OwnSummary returns Summary without the detached chunks' texts that
// JoinSummary appended: the summary that is not conversation history.
func (c *Context) OwnSummary() string {
	if len(c.Detached) == 0 {
		return c.Summary
	}
	joined := JoinSummary("", c.Detached)
	s, ok := strings.CutSuffix(c.Summary, joined)
	if !ok {
		return c.Summary
	}
	return strings.TrimSuffix(s, "\n\n")
}

func (c *Context) counter() token.Counter {
	if c.Counter == nil {
		return token.Estimator{}
	}
	return c.Counter
}

// Tokens counts s with the context's Counter.
func (c *Context) Tokens(s string) int { return c.counter().Count(s) }

// BlockTokens counts content blocks with the context's Counter.
func (c *Context) BlockTokens(b []llm.Block) int { return token.CountBlocks(c.counter(), b) }

// ToolTokens counts tool specs with the context's Counter.
func (c *Context) ToolTokens(t []llm.ToolSpec) int { return token.CountTools(c.counter(), t) }

// CounterName says how the Breakdown's tokens are counted.
func (c *Context) CounterName() string { return c.counter().Name() }

// File is a context file.
type File struct {
	Path    string // as shown to the model (relative to the project root where possible)
	Content string
	// Refreshed is when the content last changed (Unix ms); layouts that order
	// context by stability use it. 0 = unknown.
	Refreshed int64
}

// SymbolMap is a repository's symbol map: a legend (abbreviation key and
// path aliases) and one block per source file, sorted by path. Blocks use
// the legend's aliases, so a block is meaningful only with its legend.
type SymbolMap struct {
	Legend string
	Blocks []SymbolBlock
}

// SymbolBlock is the symbol block of one file: its path (relative to the
// project root, slash-separated) and the compact text listing its
// top-level declarations and their members.
type SymbolBlock struct {
	Path string
	Text string
}

// URLDoc is one fetched URL: the address as given, a title (the HTML
// <title>, else the URL) and the content as text.
type URLDoc struct {
	URL     string
	Title   string
	Content string
	// Symbols is the symbol map block of the content when the URL names a
	// source file ("" = none).
	Symbols string
}

// Needs names the optional parts of a Context that cost the runtime work
// to gather (walking the repository, parsing sources, reading the
// reminder). The runtime gathers a part only when the layout asks for it,
// so layouts that do not place it send the same requests as before.
type Needs struct {
	FileTree bool // Context.FileTree
	Reminder bool // Context.Reminder
	Symbols  bool // Context.Symbols
	// SystemFiles asks for Context.System read from the workspace's
	// system.md and system_extra.md before every request (docs/tiered.md,
	// "system prompt").
	SystemFiles bool
	// URLs and Review say the layout places Context.URLs and
	// Context.Review; the runtime refuses --url and --review for a layout
	// that would drop them.
	URLs   bool
	Review bool
}

// NeedsReporter is implemented by layouts that place optional Context
// parts. Needs must return the same value for the layout's lifetime and be
// safe for concurrent use.
type NeedsReporter interface {
	Needs() Needs
}

// NeedsOf returns what l asks the runtime to gather (the zero Needs when l
// does not implement NeedsReporter).
func NeedsOf(l Layout) Needs {
	if n, ok := l.(NeedsReporter); ok {
		return n.Needs()
	}
	return Needs{}
}

// Stateful is implemented by layouts that keep state from one request to
// the next (placements, stability counts, panel ids): State returns it as
// JSON and SetState restores it, so a loop restored from a stored state
// (agent.State.Layout) continues without replaying the layout over every
// request it already sent. SetState of what State returned must leave the
// layout assembling exactly what it would have; SetState fails on data it
// cannot decode.
type Stateful interface {
	State() ([]byte, error)
	SetState(data []byte) error
}

// KeepAliveReporter is implemented by layouts whose cache decisions count
// on keep-alive pings: while the session is idle the runtime re-sends the
// last request with a one-token answer shortly before its cache entry
// expires, as often as cachesim.KeepAliveForRequest allows for that
// request (Aider's --cache-keepalive-pings is the same idea; docs/cachefit.md).
// KeepsAlive must return the same value for the layout's lifetime.
type KeepAliveReporter interface {
	KeepsAlive() bool
}

// KeepsAliveOf reports whether the runtime should ping for l (false when l
// does not implement KeepAliveReporter).
func KeepsAliveOf(l Layout) bool {
	k, ok := l.(KeepAliveReporter)
	return ok && k.KeepsAlive()
}

// Skill is the metadata of an Agent Skill (SKILL.md front matter).
type Skill struct {
	Name        string
	Description string
	Path        string // path of the SKILL.md file
}

// Layout assembles a request from a context.
//
// Assemble must be deterministic: the same sequence of Contexts gives
// byte-identical requests (no map iteration order, no clock reads; stateful
// layouts depend only on the contexts they were given before). It returns an
// error naming the offending input when the context cannot be laid out (e.g.
// a history that does not alternate roles). A stateful layout is not safe
// for concurrent use: one instance serves one session.
type Layout interface {
	Name() string
	Assemble(c *Context) (*llm.Request, *Breakdown, error)
}

// Span is one named part of an assembled request, in prompt order (tools →
// system → messages): a layer, tier, panel or history range.
type Span struct {
	Name string `json:"name"` // e.g. "tools", "system", "history"
	Role string `json:"role"` // "tools", "system", "user", "assistant" or "mixed"
	// First and Last are the message indexes the span covers (-1 for tools and
	// system spans).
	First   int    `json:"first_message"`
	Last    int    `json:"last_message"`
	Tokens  int    `json:"tokens"`         // token count of the span (Breakdown.Counter says how counted)
	Preview string `json:"preview"`        // the first characters of the span's text
	Break   bool   `json:"breakpoint"`     // a cache breakpoint closes this span
	Note    string `json:"note,omitempty"` // anything a reader should know (e.g. "empty, omitted")
	// Cache is the layout's own per-span cache tracking (nil = the layout
	// does not track; docs/panels.md, "cache cost tracking").
	Cache *SpanCache `json:"cache,omitempty"`
}

// SpanCache is a layout's cache bookkeeping for one span: the span's
// content hash, whether it matched the previous request at the same
// position with every span before it matching too (a prefix hit), and its
// cost at the model's prices.
type SpanCache struct {
	Hash string `json:"hash"` // hex SHA-256 of the span's content, first 16 digits
	Hit  bool   `json:"hit"`
	// Cost is this request's cost of the span in USD: Tokens at the
	// model's cache-read price on a hit, at its input price on a miss (0
	// when the model has no price).
	Cost float64 `json:"cost_usd"`
	// Total is Cost summed over every request of the loop in which the
	// span (by its id) appeared, this one included.
	Total float64 `json:"total_cost_usd"`
}

// Breakdown explains an assembled request.
type Breakdown struct {
	Layout      string `json:"layout"`
	Spans       []Span `json:"layers"`
	TotalTokens int    `json:"total_tokens"`
	Breakpoints int    `json:"breakpoints"`
	Counter     string `json:"counter"` // how tokens were counted, e.g. "estimate (4 bytes/token)"
}

var layouts = map[string]func() Layout{}

// Register makes a layout selectable by name. newLayout returns a fresh
// instance: stateful layouts (tiered, cachefit) keep per-session state, so
// each session gets its own. It panics on a duplicate name (a programming
// error at init time, like http.Handle).
func Register(name string, newLayout func() Layout) {
	if _, dup := layouts[name]; dup {
		panic("prompt: duplicate layout " + name)
	}
	layouts[name] = newLayout
}

// Lookup returns a new instance of the layout registered under name, or an
// error listing the valid names.
func Lookup(name string) (Layout, error) {
	if l, ok := layouts[name]; ok {
		return l(), nil
	}
	return nil, fmt.Errorf("unknown layout %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// Names returns the registered layout names, sorted.
func Names() []string {
	var out []string
	for n := range layouts {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Preview returns the first n runes of s with newlines shown as ⏎.
func Preview(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// CheckHistory verifies that history is a valid conversation for every
// provider: non-empty, starting with a user message, alternating roles, and
// every tool_result answering a tool_use of the message just before it. The
// error names the message index.
func CheckHistory(history []llm.Message) error {
	if len(history) == 0 {
		return fmt.Errorf("history is empty: a request needs at least one user message")
	}
	if history[0].Role != llm.RoleUser {
		return fmt.Errorf("history[0] has role %q: the conversation must start with a user message", history[0].Role)
	}
	for i, m := range history {
		if err := m.Validate(); err != nil {
			return fmt.Errorf("history[%d]: %w", i, err)
		}
		if i > 0 && history[i-1].Role == m.Role {
			return fmt.Errorf("history[%d] and history[%d] both have role %q: roles must alternate", i-1, i, m.Role)
		}
		for _, b := range m.Content {
			if b.Type != llm.BlockToolResult {
				continue
			}
			if i == 0 || !hasToolUse(history[i-1], b.ID) {
				return fmt.Errorf("history[%d]: tool_result %q answers no tool_use in the previous message", i, b.ID)
			}
		}
	}
	return nil
}

func hasToolUse(m llm.Message, id string) bool {
	for _, b := range m.Content {
		if b.Type == llm.BlockToolUse && b.ID == id {
			return true
		}
	}
	return false
}

// ToolNames returns the tool names joined with ", ", previewed to 60 runes.
func ToolNames(tools []llm.ToolSpec) string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return Preview(strings.Join(names, ", "), 60)
}
