package durable

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	sm "github.com/strata-agent/strata/workflow"
)

// TestStageEventsArePagedByBytes reads a stage execution's events as
// StagesWatch.Next does — 2,000 small loop events, a 300 KB audit event, a
// 200 KB message — and finds every answer within MaxAnswerBytes and every
// event back whole.
func TestStageEventsArePagedByBytes(t *testing.T) {
	var audit []sm.Event
	for i := range 10 {
		audit = append(audit, sm.Event{Kind: "workflow.stage_entered", Stage: fmt.Sprint("s", i)})
	}
	audit = append(audit, sm.Event{Kind: "workflow.stage_assert_outcome", Reason: randomText(t, 300_000)})
	audit = append(audit, sm.Event{Kind: "workflow.stage_exited"})
	var loop []event.Event
	for i := range 2000 {
		loop = append(loop, event.Event{Kind: event.Progress, Seq: int64(i + 1), Text: strings.Repeat("x", 100)})
	}
	big := llm.AssistantText(randomText(t, 200_000))
	loop = append(loop, event.Event{Kind: event.MessageEnd, Message: &big})

	var cur StageCursor
	ps := map[string]*parts{}
	var gotAudit []sm.Event
	var gotLoop []event.Event
	answers, largest := 0, 0
	for {
		evs, err := stageEvents("s", audit, loop, cur)
		if err != nil {
			t.Fatal(err)
		}
		answers++
		raw, _ := json.Marshal(evs)
		largest = max(largest, len(raw))
		cur.Audit += len(evs.Audit)
		cur.Loop += len(evs.Loop)
		gotAudit, gotLoop = append(gotAudit, evs.Audit...), append(gotLoop, evs.Loop...)
		if a, ok, err := takePart[sm.Event](ps, "audit", evs.AuditPart, &cur.Audit, &cur.AuditOffset); err != nil {
			t.Fatal(err)
		} else if ok {
			gotAudit = append(gotAudit, a)
		}
		if l, ok, err := takePart[event.Event](ps, "loop", evs.LoopPart, &cur.Loop, &cur.LoopOffset); err != nil {
			t.Fatal(err)
		} else if ok {
			gotLoop = append(gotLoop, l)
		}
		if !evs.More {
			break
		}
		if answers > 1000 {
			t.Fatal("the pages do not end")
		}
	}
	t.Logf("%d answers, the largest %d bytes", answers, largest)
	if largest > MaxAnswerBytes {
		t.Errorf("an answer of %d bytes; want at most MaxAnswerBytes (%d)", largest, MaxAnswerBytes)
	}
	if !sameJSON(t, gotAudit, audit) || !sameJSON(t, gotLoop, loop) {
		t.Error("the events read back differ from the stage's")
	}
}

// TestPendingCallInputIsLeftOutWhenTooLarge: an approval request whose
// call writes a 200 KB file is answered within MaxAnswerBytes with the
// path and the start of the text, naming what was left out; a small one is
// unchanged.
func TestPendingCallInputIsLeftOutWhenTooLarge(t *testing.T) {
	in, _ := json.Marshal(map[string]string{"command": "create", "path": "big.txt", "file_text": randomText(t, 200_000)})
	p := &agent.ApprovalRequest{CorrelationID: "c1", Call: llm.ToolUseBlock("toolu_w", "fs_write", in)}
	got := boundPending(p)
	raw, _ := json.Marshal(got)
	var fields map[string]string
	if err := json.Unmarshal(got.Call.Input, &fields); err != nil || len(raw) > MaxAnswerBytes || got.Call.ID != "toolu_w" ||
		fields["path"] != "big.txt" || !strings.Contains(fields["file_text"], "left out") {
		t.Errorf("a %d-byte pending answer (%v): %.300s", len(raw), err, got.Call.Input)
	}
	if len(p.Call.Input) != len(in) {
		t.Error("bounding changed the workflow's own request")
	}
	small := &agent.ApprovalRequest{Call: use("toolu_s", "fs_write", `{"path":"a"}`)}
	if got := boundPending(small); string(got.Call.Input) != `{"path":"a"}` {
		t.Errorf("a small call's input became %s", got.Call.Input)
	}
}

// TestLargeStageStateIsReadInParts: a final stage state over
// MaxAnswerBytes (an 80 KB source, a 150 KB completion) is returned
// without its source, then without its slots, and StagesStateQuery's
// Parts give it back whole.
func TestLargeStageStateIsReadInParts(t *testing.T) {
	completion, _ := json.Marshal(map[string]string{"summary": randomText(t, 150_000)})
	st := &sm.State{Workflow: "w", Source: strings.Repeat("# a long definition\n", 4000), Next: "", Outcome: "ok",
		Slots: map[string]sm.Slot{"plan": {Outcome: "ok", Attempt: 1, Completion: completion}}}
	small := &sm.State{Workflow: "w", Source: "stages: []", Slots: map[string]sm.Slot{}}
	if got := boundState(small); got != small {
		t.Error("a small state was changed")
	}
	noSource := &sm.State{Workflow: "w", Source: st.Source, Slots: map[string]sm.Slot{"plan": {Outcome: "ok", Completion: json.RawMessage(`{}`)}}}
	if got := boundState(noSource); got.Source != "" || got.Slots == nil || noSource.Source == "" {
		t.Errorf("a state large by its source: source %d bytes, slots %v", len(got.Source), got.Slots)
	}
	got := boundState(st)
	raw, _ := json.Marshal(got)
	if len(raw) > MaxAnswerBytes || got.Slots != nil || got.Outcome != "ok" || st.Slots == nil {
		t.Fatalf("a %d-byte bounded state: slots %v", len(raw), got.Slots)
	}
	whole, _ := json.Marshal(st)
	back, err := readParts[*sm.State](partOf(whole, 0, MaxAnswerBytes-answerReserve), func(offset int) (*Part, error) {
		p := partOf(whole, offset, MaxAnswerBytes-answerReserve)
		if b, _ := json.Marshal(p); len(b) > MaxAnswerBytes {
			t.Errorf("a %d-byte Part", len(b))
		}
		return p, nil
	})
	if err != nil || !sameJSON(t, back, st) {
		t.Errorf("the state read in parts differs: %v", err)
	}
}

// TestPagesAlwaysMoveOn: whatever the sizes — an item of exactly the
// budget, one a byte over, many small ones — every page but the last
// holds an item or a Part, so a reader always gets to the end, and gets
// every item back.
func TestPagesAlwaysMoveOn(t *testing.T) {
	const budget = 1000
	var items []string
	for _, n := range []int{budget - 2, budget - 1, 3, budget, 5, budget + 1, 1} { // JSON adds the two quotes
		items = append(items, strings.Repeat("x", n))
	}
	for range 400 {
		items = append(items, "y")
	}
	got, err := readPaged(func(from, offset int) ([]string, *Part, bool, error) {
		page, part, more, err := pageOf(items, from, offset, 100, budget)
		if len(page) == 0 && part == nil && more {
			t.Fatalf("an empty page at %d says more", from)
		}
		return page, part, more, err
	})
	if err != nil || !sameJSON(t, got, items) {
		t.Errorf("read %d of %d items back (%v)", len(got), len(items), err)
	}
}

// TestPromptResultWithinTheBound: a prompt result whose error text is
// 100 KB keeps the error's kind and first 4 KiB; one whose answer is
// 100 KB leaves the message out and says where it is in the history.
func TestPromptResultWithinTheBound(t *testing.T) {
	h := []llm.Message{llm.UserText("q"), llm.AssistantText(randomText(t, 100_000))}
	failed := boundResult(PromptResult{Result: &agent.Result{}, Error: &agent.StepError{Kind: "denied", Text: randomText(t, 100_000)}}, h)
	if failed.Error.Kind != "denied" || len(failed.Error.Text) > 5<<10 || !strings.Contains(failed.Error.Text, "left out") || failed.MessageAt != 0 {
		t.Errorf("a 100 KB error: kind %q, %d bytes, message at %d", failed.Error.Kind, len(failed.Error.Text), failed.MessageAt)
	}
	long := boundResult(PromptResult{Result: &agent.Result{Message: h[1], Turns: 1}}, h)
	raw, _ := json.Marshal(long)
	if len(raw) > MaxAnswerBytes || long.MessageAt != 2 || long.Result.Turns != 1 || long.Result.Message.Text() != "" {
		t.Errorf("a 100 KB answer: %d bytes, message at %d", len(raw), long.MessageAt)
	}
	short := PromptResult{Result: &agent.Result{Message: llm.AssistantText("ok")}}
	if got := boundResult(short, h); got.MessageAt != 0 || got.Result.Message.Text() != "ok" {
		t.Errorf("a short answer changed: %+v", got)
	}
}
