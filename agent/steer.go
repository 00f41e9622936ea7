package agent

import "sync"

// Steering and follow-up messages: queued from any goroutine, taken by the
// loop before its next model call (docs/turn.md, rule 13).

// Queue is the in-memory Inbox: steering and follow-up messages queued from
// any goroutine. The zero value is ready to use.
type Queue struct {
	mu        sync.Mutex
	steering  []string
	followUps []string
	taking    bool // the running prompt still takes steering (Offer); false once its loop has ended
}

// Steer queues a steering message: it is added as a user message before the
// next model call of the running prompt (or of the next one, when none
// runs or the running one has ended its loop).
func (q *Queue) Steer(text string) {
	q.mu.Lock()
	q.steering = append(q.steering, text)
	q.mu.Unlock()
}

// Offer queues text as a steering message of the running prompt and reports
// true when that prompt will still send it to the model; false, queueing
// nothing, when no prompt takes steering (see Agent.SteerRunning).
func (q *Queue) Offer(text string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.taking {
		return false
	}
	q.steering = append(q.steering, text)
	return true
}

// FollowUp queues a follow-up message: when the loop would stop (the model
// ended its turn), it is added as a user message and the loop goes on.
func (q *Queue) FollowUp(text string) {
	q.mu.Lock()
	q.followUps = append(q.followUps, text)
	q.mu.Unlock()
}

// Taking implements Inbox.
func (q *Queue) Taking(on bool) {
	q.mu.Lock()
	q.taking = on
	q.mu.Unlock()
}

// EndLoop implements Inbox: it runs under the lock Offer takes, so a
// message is either taken by this loop or refused to the caller.
func (q *Queue) EndLoop() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.steering) > 0 {
		return false
	}
	q.taking = false
	return true
}

// TakeSteering implements Inbox.
func (q *Queue) TakeSteering() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.steering
	q.steering = nil
	return s
}

// TakeFollowUp implements Inbox.
func (q *Queue) TakeFollowUp() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.followUps) == 0 {
		return "", false
	}
	s := q.followUps[0]
	q.followUps = q.followUps[1:]
	return s, true
}

// HasSteering implements Inbox.
func (q *Queue) HasSteering() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.steering) > 0
}

// move hands q's queued messages to r (an agent swap) and empties q.
func (q *Queue) move(r *Queue) {
	q.mu.Lock()
	s, f := q.steering, q.followUps
	q.steering, q.followUps = nil, nil
	q.mu.Unlock()
	r.mu.Lock()
	r.steering, r.followUps = s, f
	r.mu.Unlock()
}

// Steer queues a steering message: it is added as a user message before the
// next model call of the running user turn (or of the next one, when none
// runs or the running one has ended its loop). Front ends that must know
// which prompt a message reaches use SteerRunning.
func (a *Agent) Steer(text string) { a.queue.Steer(text) }

// SteerRunning queues text as a steering message of the running prompt and
// reports true when that prompt will still send it to the model: before
// its next model call, or, when the model has ended without tool calls,
// in one more turn made for it (the Rust agent-loop design: "The inner loop
// in run_loop continues when there are tool calls or pending steering
// messages"; docs/turn.md, rule 13). It reports false, and queues nothing,
// when no prompt runs (a prompt runs from the start of Prompt or
// PromptWith, so a front end that has just started one in a goroutine may
// still see false) or the running one has already ended its loop: the
// caller keeps text (the front ends run it as the next prompt), so a
// message is never lost nor sent twice. The decision is atomic with the
// loop's own end. One case remains: when a model call accepted for text
// fails, the prompt ends with that error and text goes with the next
// prompt's first call.
func (a *Agent) SteerRunning(text string) bool { return a.queue.Offer(text) }

// FollowUp queues a follow-up message: when the loop would stop (the model
// ended its turn), it is added as a user message and the loop goes on.
func (a *Agent) FollowUp(text string) { a.queue.FollowUp(text) }
