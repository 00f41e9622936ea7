// Package panels is the layout of Context Pilot (docs/panels.md): the system
// prompt, then every context item as a synthetic `dynamic_panel` tool_use /
// tool_result pair ordered by last refresh time (oldest, most stable
// first), a footer pair, the system prompt repeated for emphasis (Anthropic
// only), then the real conversation with empty messages removed and orphan
// tool calls skipped.
//
// Panels have Context Pilot's fixed ids (P1 Todo … P9 Scratchpad; files,
// hook outputs, the summary and conversation history chunks from P10 up,
// stable for the layout instance's life). The layout is stateful: it
// remembers the dynamic ids it gave, when each panel's content last
// changed, when each message was first sent, and the previous request's
// panel hashes for the per-panel cache cost (docs/panels.md, "cache cost
// tracking"). One instance serves one loop.
//
// Exact texts are Context Pilot's (docs/panels.md, rules 10–12); the "timestamp unknown"
// fallback and the footer template's full wording are Context Pilot's
// (src/constants prompts: PANEL_TIMESTAMP_UNKNOWN, PANEL_FOOTER).
package panels

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// Exact texts (docs/panels.md, "request", rules 10–12).
const (
	Header          = "Beginning of dynamic panel display. All content displayed below may be considered up to date."
	TimestampPrefix = "Panel automatically generated at "
	TimestampNone   = "Panel content (timestamp unknown - static or never refreshed)"
	FooterPrefix    = "End of dynamic panel displays. All content displayed above may be considered up to date: it is automatically kept updated as we speak.\n\n"
	FooterAck       = "Panel display complete. Proceeding with conversation."
	SeedPrefix      = "System instructions (repeated for emphasis):\n\n"
	SeedAck         = "Understood. I will follow these instructions."
	ToolName        = "dynamic_panel"
	// Opening is strata's user message before the first panel, sent only
	// where the API rejects a conversation that starts with an assistant
	// message (Bedrock Converse, Gemini; NeedsOpening). Elsewhere the
	// panels open the conversation, as in the design (docs/panels.md,
	// "alternation").
	Opening = "Show the dynamic panels."
)

// Layout is the panels layout. The zero value is ready to use; it is not
// safe for concurrent use (one instance per loop, prompt.Layout).
type Layout struct {
	ids   map[string]string // dynamic panel key → id
	next  int               // number of the next dynamic id (0 = FirstDynamic)
	since map[string]seen   // panel id → its content and the request time it first had it
	msgAt []int64           // whole-conversation message index → time of the first request that carried it (0 unknown, pending)
	costs costs
}

// pending marks a time learned from a request without a clock (Now = 0,
// e.g. a restored loop replaying its history): the next request with a
// clock sets it. strata stores no per-message times, so after a resume the
// messages and panels from before it are dated by the first request after
// it (docs/panels.md, "timestamps").
const pending = -1

type seen struct {
	hash string
	at   int64
}

func init() { prompt.Register("panels", func() prompt.Layout { return &Layout{} }) }

// Name returns "panels".
func (*Layout) Name() string { return "panels" }

// Items returns the context's panels in the order Context Pilot shows them
// (sorted by Refreshed ascending, ties in id order) and records what the
// layout learns from this request: dynamic ids for new items, content
// changes and message times. Refreshed is the source's time where it has
// one (file, todo list, log entry, detach time), else the request time at
// which the panel's content last changed (c.Now; 0 = unknown).
func (l *Layout) Items(c *prompt.Context) []Item {
	if l.ids == nil {
		l.ids, l.since, l.next = map[string]string{}, map[string]seen{}, FirstDynamic
	}
	offset := 0
	if n := len(c.Detached); n > 0 {
		offset = c.Detached[n-1].Last + 1
	}
	for i, at := range l.msgAt {
		if at == pending && c.Now != 0 {
			l.msgAt[i] = c.Now
		}
	}
	for len(l.msgAt) < offset+len(c.History) {
		at := c.Now
		switch {
		case len(l.msgAt) < offset:
			at = 0 // detached before this layout saw it: unknown
		case at == 0:
			at = pending
		}
		l.msgAt = append(l.msgAt, at)
	}
	items := fixedItems(c)
	dyn := dynamicItems(c, l.msgTime)
	for i := range dyn {
		id, ok := l.ids[dyn[i].key]
		if !ok {
			id = "P" + strconv.Itoa(l.next)
			l.ids[dyn[i].key] = id
			l.next++
		}
		dyn[i].ID = id
	}
	sort.SliceStable(dyn, func(i, j int) bool { return idNum(dyn[i].ID) < idNum(dyn[j].ID) })
	items = append(items, dyn...)
	for i := range items {
		it := &items[i]
		h := Hash(it.Header + "\n" + it.Content)
		s, ok := l.since[it.ID]
		if !ok || s.hash != h || s.at == pending {
			s = seen{hash: h, at: c.Now}
			if c.Now == 0 {
				s.at = pending
			}
			l.since[it.ID] = s
		}
		if it.Refreshed == 0 {
			it.Refreshed = max(s.at, 0)
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Refreshed < items[j].Refreshed })
	return items
}

func idNum(id string) int { n, _ := strconv.Atoi(id[1:]); return n }

// msgTime returns when message i of the whole conversation was first sent
// (0 = unknown).
func (l *Layout) msgTime(i int) int64 {
	if i >= 0 && i < len(l.msgAt) {
		return l.msgAt[i]
	}
	return 0
}

// NeedsOpening reports whether api rejects a conversation whose first
// message is the assistant's (Bedrock Converse: "A conversation must start
// with a user message"; Gemini: a function call must follow a user turn),
// so the panels need the Opening user message before them. The Anthropic
// Messages API accepts an assistant message first (anthropic-sdk-typescript
// issue 622: it succeeds on Anthropic and fails on Bedrock) and OpenAI's
// APIs do too (Context Pilot's OpenAI-compatible builder sends the panels
// right after the system message).
func NeedsOpening(api llm.API) bool { return api == llm.APIBedrock || api == llm.APIGemini }

// seedApart reports whether the seed re-injection is its own user message
// after the footer's tool_result, as the design shows (two user messages in
// a row): on the Anthropic Messages API, which combines consecutive
// same-role turns itself ("Consecutive user or assistant turns in your
// request will be combined into a single turn", Messages API reference).
// The seed is sent only there (docs/panels.md, rule 12).
func seedApart(api llm.API) bool { return api == "" || api == llm.APIAnthropic }

// builder appends messages, merging a message into the previous one of
// the same role, so roles always alternate (docs/panels.md,
// "alternation"). Merged content is copied, never appended in place.
type builder struct{ msgs []llm.Message }

// push appends m as a message of its own, even after one of the same role.
func (b *builder) push(m llm.Message) int {
	b.msgs = append(b.msgs, llm.Message{Role: m.Role, Content: slices.Clone(m.Content)})
	return len(b.msgs) - 1
}

func (b *builder) add(m llm.Message) int {
	if n := len(b.msgs); n > 0 && b.msgs[n-1].Role == m.Role {
		b.msgs[n-1].Content = slices.Concat(b.msgs[n-1].Content, m.Content)
		return n - 1
	}
	b.msgs = append(b.msgs, llm.Message{Role: m.Role, Content: slices.Clone(m.Content)})
	return len(b.msgs) - 1
}

// Assemble lays out the request. It fails only on an empty history.
func (l *Layout) Assemble(c *prompt.Context) (*llm.Request, *prompt.Breakdown, error) {
	hist := Conversation(c.History)
	if len(hist) == 0 {
		return nil, nil, errEmpty
	}
	req := &llm.Request{Model: c.Model, MaxTokens: c.MaxTokens, Tools: c.Tools}
	bd := &prompt.Breakdown{Layout: "panels", Counter: c.CounterName()}
	b := &builder{}
	span := func(name string, first int, text string) {
		bd.Spans = append(bd.Spans, prompt.Span{Name: name, Role: "mixed", First: first, Last: len(b.msgs) - 1,
			Tokens: c.Tokens(text), Preview: prompt.Preview(text, 60)})
	}
	if len(c.Tools) > 0 {
		bd.Spans = append(bd.Spans, prompt.Span{Name: "tools", Role: "tools", First: -1, Last: -1,
			Tokens: c.ToolTokens(c.Tools), Preview: prompt.ToolNames(c.Tools)})
	}
	if c.System != "" {
		req.System = []llm.Block{llm.TextBlock(c.System)}
		bd.Spans = append(bd.Spans, prompt.Span{Name: "system", Role: "system", First: -1, Last: -1,
			Tokens: c.Tokens(c.System), Preview: prompt.Preview(c.System, 60)})
	}
	items := l.Items(c)
	if len(items) > 0 && NeedsOpening(c.API) {
		first := b.add(llm.UserText(Opening))
		span("opening", first, Opening)
	}
	var ids, sent []string
	var tokens []int
	for i, it := range items {
		var blocks []llm.Block
		if i == 0 {
			blocks = append(blocks, llm.TextBlock(Header))
		}
		stamp := timestamp(it.Refreshed)
		input, _ := json.Marshal(map[string]string{"id": it.ID})
		blocks = append(blocks, llm.TextBlock(stamp), llm.ToolUseBlock("panel_"+it.ID, ToolName, input))
		content := "======= [" + it.ID + "] " + it.Header + " =======\n" + it.Content
		first := b.add(llm.Message{Role: llm.RoleAssistant, Content: blocks})
		b.add(llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("panel_"+it.ID, content, false)}})
		span("panel "+it.ID+" "+it.Header, first, content)
		ids, sent = append(ids, it.ID), append(sent, stamp+"\x00"+it.ID+"\x00"+content)
		tokens = append(tokens, bd.Spans[len(bd.Spans)-1].Tokens)
	}
	for i, sc := range l.costs.track(c.Model, ids, sent, tokens) {
		bd.Spans[len(bd.Spans)-len(ids)+i].Cache = &sc
	}
	if len(items) > 0 {
		footer := Footer(l.messageTimes(c), c.Now)
		first := b.add(llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock(footer),
			llm.ToolUseBlock("panel_footer", ToolName, json.RawMessage(`{"action":"end_panels"}`))}})
		b.add(llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("panel_footer", FooterAck, false)}})
		span("footer", first, footer)
	}
	if c.System != "" && seedApart(c.API) {
		first := b.push(llm.UserText(SeedPrefix + c.System))
		b.add(llm.AssistantText(SeedAck))
		span("seed re-injection", first, SeedPrefix+c.System+SeedAck)
	}
	first := len(b.msgs)
	n := 0
	for _, m := range hist {
		first = min(first, b.add(m))
		n += c.BlockTokens(m.Content)
	}
	bd.Spans = append(bd.Spans, prompt.Span{Name: "conversation", Role: "mixed", First: first, Last: len(b.msgs) - 1,
		Tokens: n, Preview: prompt.Preview(hist[0].Text(), 60)})
	for _, s := range bd.Spans {
		bd.TotalTokens += s.Tokens
	}
	req.Messages = b.msgs
	return req, bd, nil
}

// messageTimes returns the live messages with their numbers in the whole
// conversation and the times the layout first sent them.
func (l *Layout) messageTimes(c *prompt.Context) []MessageTime {
	offset := 0
	if n := len(c.Detached); n > 0 {
		offset = c.Detached[n-1].Last + 1
	}
	out := make([]MessageTime, len(c.History))
	for i, m := range c.History {
		out[i] = MessageTime{N: offset + i + 1, Role: m.Role, At: l.msgTime(offset + i)}
	}
	return out
}

type emptyError struct{}

func (emptyError) Error() string {
	return "panels: the conversation is empty: a request needs at least one user message"
}

var errEmpty = emptyError{}

// Conversation returns the history as Context Pilot sends it: messages with
// no content removed, and tool_use blocks that no tool_result in the next
// message answers (orphans, e.g. cut by max_tokens) skipped, so the API never
// sees an unanswered call (docs/panels.md, rule 14). Removing a message can
// leave two neighbours of the same role; Assemble merges them.
func Conversation(history []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(history))
	for i, m := range history {
		var keep []llm.Block
		for _, b := range m.Content {
			if b.Type == llm.BlockToolUse && !answered(history, i, b.ID) {
				continue
			}
			if b.Type == llm.BlockText && b.Text == "" {
				continue
			}
			keep = append(keep, b)
		}
		if len(keep) > 0 {
			out = append(out, llm.Message{Role: m.Role, Content: keep})
		}
	}
	return out
}

func answered(history []llm.Message, i int, id string) bool {
	if i+1 >= len(history) {
		return false
	}
	for _, b := range history[i+1].Content {
		if b.Type == llm.BlockToolResult && b.ID == id {
			return true
		}
	}
	return false
}

// FixedPanels reports true: the layout shows Context Pilot's fixed panels,
// so the runtime gathers their sources (prompt.Context.Todos, Agents, Logs).
func (*Layout) FixedPanels() bool { return true }

// Needs asks the runtime for the project's file tree, shown as the fixed
// panel P5 "Tree" (docs/panels.md, rule 5: Context Pilot's Tree panel, a
// directory listing re-cached when files change; strata re-lists the files
// before every request).
func (*Layout) Needs() prompt.Needs { return prompt.Needs{FileTree: true} }
