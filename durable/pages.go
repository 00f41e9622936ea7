package durable

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	sm "github.com/strata-agent/strata/workflow"
)

// Everything a client receives from a session's workers — query answers,
// update results — is bounded by bytes, so that no answer is ever large
// enough for the workers' claim check to move it out of Temporal: a
// client without the workers' store could not read the reference
// (docs/durable.md, "Claim check").

// MaxAnswerBytes bounds the JSON of one answer a client receives from a
// session's workflow (the events, history, stage and pending queries, the
// prompt update's result): 64 KiB, half of DefaultClaimThreshold and under
// MinClaimThreshold, so that no answer becomes a claim-check reference. A
// list answer stops before the item that would pass it (and says More); one
// item larger than that alone comes in Parts of its JSON.
const MaxAnswerBytes = 64 << 10

// answerReserve is what a list answer keeps for its own fields (a page's
// flags, the stage's name, the children of a stage workflow are counted
// apart).
const answerReserve = 1 << 10

// Part is a piece of the JSON encoding of one item (an event, a message)
// too large for an answer of its own: bytes [Offset, Offset+len(Data)) of
// its Size bytes. Ask again for the same item from Offset+len(Data); once
// all Size bytes are there, they decode as the item.
type Part struct {
	Offset int    `json:"offset"`
	Size   int    `json:"size"`
	Data   []byte `json:"data"`
}

// pageOf returns at most maxItems of items from index from on whose JSON
// totals at most budget bytes, and whether items remain after them. When
// items[from] alone is over budget, it returns no items and the Part of
// that item's JSON from byte offset on.
func pageOf[T any](items []T, from, offset, maxItems, budget int) ([]T, *Part, bool, error) {
	if from < 0 || from >= len(items) {
		return nil, nil, false, nil
	}
	used, n := 0, 0
	for i := from; i < len(items) && n < maxItems; i++ {
		b, err := json.Marshal(items[i])
		if err != nil {
			return nil, nil, false, fmt.Errorf("durable: encode item %d of an answer: %w", i, err)
		}
		if n == 0 && len(b) > budget {
			return nil, partOf(b, offset, budget), true, nil
		}
		if n > 0 && used+len(b)+1 > budget {
			break
		}
		used += len(b) + 1
		n++
	}
	return items[from : from+n], nil, from+n < len(items), nil
}

// partOf returns the Part of b from offset on within an answer of budget
// bytes.
func partOf(b []byte, offset, budget int) *Part {
	offset = min(max(offset, 0), len(b))
	end := min(offset+budget/4*3, len(b)) // a Part's data is base64 in the answer's JSON: 4/3 as long
	return &Part{Offset: offset, Size: len(b), Data: b[offset:end]}
}

// parts gathers the Parts of one item as a client reads them.
type parts struct{ buf []byte }

// add appends p (which must continue the bytes so far) and reports whether
// the item is whole; next is the offset to ask for.
func (ps *parts) add(p *Part) (whole bool, next int, err error) {
	if p.Offset != len(ps.buf) || len(p.Data) == 0 && p.Offset < p.Size || p.Size < p.Offset+len(p.Data) {
		return false, 0, fmt.Errorf("durable: answer part at byte %d (%d bytes of %d) does not continue the %d bytes read so far", p.Offset, len(p.Data), p.Size, len(ps.buf))
	}
	ps.buf = append(ps.buf, p.Data...)
	return len(ps.buf) == p.Size, len(ps.buf), nil
}

// EventsPage is EventsQuery's answer: events from the index asked for,
// within MaxAnswerBytes, or the Part of the first one's JSON when it alone
// is larger.
type EventsPage struct {
	// Events are the events from the index asked for.
	Events []event.Event `json:"events,omitempty"`
	// Part is a piece of the JSON of the event at the index asked for,
	// when it alone is over MaxAnswerBytes (Events is then empty).
	Part *Part `json:"part,omitempty"`
	// More says events remain after these.
	More bool `json:"more,omitempty"`
}

// eventsPage is EventsQuery's answer from index i (in evs) and part offset
// offset.
func eventsPage(evs []event.Event, i, offset int) (EventsPage, error) {
	items, part, more, err := pageOf(evs, i, offset, MaxEventsPerQuery, MaxAnswerBytes-answerReserve)
	return EventsPage{Events: items, Part: part, More: more}, err
}

// historyPage is HistoryQuery's answer from message index from and part
// offset offset.
func historyPage(h []llm.Message, from, offset int) (HistoryPage, error) {
	items, part, more, err := pageOf(h, from, offset, MaxMessagesPerQuery, MaxAnswerBytes-answerReserve)
	return HistoryPage{Ready: true, Messages: items, Part: part, More: more}, err
}

// readPaged reads one list query to its end: ask(from, offset) returns a
// page's items, Part and More, the items already decoded. Items too large
// for an answer come in Parts and are decoded here.
func readPaged[T any](ask func(from, offset int) ([]T, *Part, bool, error)) ([]T, error) {
	var out []T
	for {
		items, part, more, err := ask(len(out), 0)
		if err != nil {
			return out, err
		}
		if part != nil {
			item, err := readParts[T](part, func(offset int) (*Part, error) {
				_, p, _, err := ask(len(out), offset)
				return p, err
			})
			if err != nil {
				return out, err
			}
			out = append(out, item)
			continue
		}
		out = append(out, items...)
		if !more || len(items) == 0 {
			return out, nil
		}
	}
}

// readParts reads the item whose first Part is first, asking next(offset)
// for the rest, and decodes it.
func readParts[T any](first *Part, next func(offset int) (*Part, error)) (T, error) {
	var item T
	var ps parts
	p := first
	for {
		whole, off, err := ps.add(p)
		if err != nil {
			return item, err
		}
		if whole {
			break
		}
		if p, err = next(off); err != nil {
			return item, err
		}
		if p == nil {
			return item, fmt.Errorf("durable: the answer ended after %d of the item's bytes", off)
		}
	}
	if err := json.Unmarshal(ps.buf, &item); err != nil {
		return item, fmt.Errorf("durable: decode a %d-byte item read in parts: %w", len(ps.buf), err)
	}
	return item, nil
}

// boundCall returns call within the answer carrying it (answer, whose
// JSON must stay within MaxAnswerBytes): when too large, every field of
// the call's input over 4 KiB is cut to its first 1 KiB and a note saying
// how much was left out (a field that is not a string is replaced by the
// note), so that the path or command a person decides on stays; an input
// that is still too large, or not an object, becomes the note alone. An
// approval or grant request names the call; its whole input is in the
// session's events and history.
func boundCall(call llm.Block, answer any) llm.Block {
	b, err := json.Marshal(answer)
	if err != nil || len(b) <= MaxAnswerBytes {
		return call
	}
	over := len(b) - len(call.Input)
	note := func(n int) string {
		return fmt.Sprintf("[%d bytes left out: over durable.MaxAnswerBytes; the whole tool_use is in the session's events and history]", n)
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(call.Input, &fields) == nil {
		for k, v := range fields {
			if len(v) <= 4<<10 {
				continue
			}
			var str string
			cut := note(len(v))
			if json.Unmarshal(v, &str) == nil {
				keep := min(1<<10, len(str))
				for keep > 0 && keep < len(str) && !utf8.RuneStart(str[keep]) {
					keep--
				}
				cut = str[:keep] + "… " + note(len(str)-keep)
			}
			fields[k], _ = json.Marshal(cut)
		}
		if in, err := json.Marshal(fields); err == nil && over+len(in) <= MaxAnswerBytes {
			call.Input = in
			return call
		}
	}
	call.Input, _ = json.Marshal(fmt.Sprintf("[the %d-byte input of this %s call is left out: over durable.MaxAnswerBytes; the whole tool_use is in the session's events and history]", len(call.Input), call.Name))
	return call
}

// boundPending is PendingQuery's answer: p with its call's input left out
// when too large (boundCall).
func boundPending(p *agent.ApprovalRequest) *agent.ApprovalRequest {
	if p == nil {
		return nil
	}
	q := *p
	q.Call = boundCall(p.Call, p)
	return &q
}

// boundResult returns res within MaxAnswerBytes: an error text over 4 KiB
// is cut to its first 4 KiB, saying so; then, when the JSON is still
// larger, the result's message and completion tool_result are left out and
// MessageAt says where the message is in h, the conversation, so that
// Client.Prompt reads them through HistoryQuery.
func boundResult(res PromptResult, h []llm.Message) PromptResult {
	fits := func() bool {
		b, err := json.Marshal(res)
		return err != nil || len(b) <= MaxAnswerBytes
	}
	if fits() {
		return res
	}
	if e := res.Error; e != nil && len(e.Text) > 4<<10 {
		keep := 4 << 10
		for keep > 0 && !utf8.RuneStart(e.Text[keep]) {
			keep--
		}
		res.Error = &agent.StepError{Kind: e.Kind, Text: e.Text[:keep] + fmt.Sprintf("… [%d bytes left out: over durable.MaxAnswerBytes]", len(e.Text)-keep)}
		if fits() {
			return res
		}
	}
	if res.Result == nil {
		return res
	}
	at := -1
	for i, m := range slices.Backward(h) {
		if m.Role == llm.RoleAssistant {
			at = i
			break
		}
	}
	if at < 0 {
		return res
	}
	r := *res.Result
	r.Message, r.ToolResult = llm.Message{Role: llm.RoleAssistant}, nil
	res.Result, res.MessageAt = &r, at+1
	return res
}

// stageEvents is StageEventsQuery's answer at cursor c: each list gets half
// the answer's bytes.
func stageEvents(stage string, audit []sm.Event, loop []event.Event, c StageCursor) (StageEvents, error) {
	half := (MaxAnswerBytes - answerReserve) / 2
	out := StageEvents{Stage: stage}
	var more1, more2 bool
	var err error
	if out.Audit, out.AuditPart, more1, err = pageOf(audit, c.Audit, c.AuditOffset, MaxEventsPerQuery, half); err != nil {
		return out, err
	}
	if out.Loop, out.LoopPart, more2, err = pageOf(loop, c.Loop, c.LoopOffset, MaxEventsPerQuery, half); err != nil {
		return out, err
	}
	out.More = more1 || more2
	return out, nil
}

// stagesProgress is StagesQuery's answer: the parent's audit events from
// after (Part offset offset) in what the children leave of MaxAnswerBytes.
func stagesProgress(audit []sm.Event, children []StageChild, after, offset int) (StagesProgress, error) {
	b, err := json.Marshal(children)
	if err != nil {
		return StagesProgress{}, fmt.Errorf("durable: encode the stage executions: %w", err)
	}
	p := StagesProgress{Children: children}
	p.Events, p.Part, p.More, err = pageOf(audit, after, offset, MaxEventsPerQuery, max(MaxAnswerBytes-answerReserve-len(b), 4<<10))
	return p, err
}

// takePart adds p, a Part of the item at *index, to the parts gathered
// under key in ps, and moves *offset on; when the item is whole it returns
// it, and *index moves past it. A nil p does nothing.
func takePart[T any](ps map[string]*parts, key string, p *Part, index, offset *int) (T, bool, error) {
	var item T
	if p == nil {
		return item, false, nil
	}
	buf := ps[key]
	if buf == nil {
		buf = &parts{}
		ps[key] = buf
	}
	whole, next, err := buf.add(p)
	if err != nil || !whole {
		*offset = next
		return item, false, err
	}
	delete(ps, key)
	*offset = 0
	*index++
	if err := json.Unmarshal(buf.buf, &item); err != nil {
		return item, false, fmt.Errorf("durable: decode a %d-byte event read in parts: %w", len(buf.buf), err)
	}
	return item, true, nil
}

// boundState returns the stage workflow's result within MaxAnswerBytes:
// st itself; else a copy without its Source (the client that started it
// has it); else one without its Source and its Slots (nil, where a state
// always has a map), which Client.RunStages reads through
// StagesStateQuery.
func boundState(st *sm.State) *sm.State {
	if st == nil {
		return nil
	}
	if b, err := json.Marshal(st); err != nil || len(b) <= MaxAnswerBytes {
		return st
	}
	c := *st
	c.Source = ""
	if b, err := json.Marshal(&c); err == nil && len(b) <= MaxAnswerBytes {
		return &c
	}
	c.Slots, c.Feedback = nil, ""
	return &c
}
