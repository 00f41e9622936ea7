package agent

// Steering and follow-up messages: queued from any goroutine, taken by the
// loop before its next model call (docs/turn.md, rule 13).

// Steer queues a steering message: it is added as a user message before the
// next model call of the running user turn (or of the next one, when none
// runs or the running one has ended its loop). Front ends that must know
// which prompt a message reaches use SteerRunning.
func (a *Agent) Steer(text string) {
	a.mu.Lock()
	a.steering = append(a.steering, text)
	a.mu.Unlock()
}

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
func (a *Agent) SteerRunning(text string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.taking {
		return false
	}
	a.steering = append(a.steering, text)
	return true
}

// takeSteers sets whether SteerRunning queues for the running prompt: on
// when a prompt starts, off when its loop ends (endSession, or endLoop).
func (a *Agent) takeSteers(on bool) {
	a.mu.Lock()
	a.taking = on
	a.mu.Unlock()
}

// endLoop ends the loop's steering, unless a steering message is pending:
// then it reports false and the loop makes another turn for it. It runs
// under the lock SteerRunning takes, so a message is either taken by this
// loop or refused to the caller.
func (a *Agent) endLoop() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.steering) > 0 {
		return false
	}
	a.taking = false
	return true
}

// FollowUp queues a follow-up message: when the loop would stop (the model
// ended its turn), it is added as a user message and the loop goes on.
func (a *Agent) FollowUp(text string) {
	a.mu.Lock()
	a.followUps = append(a.followUps, text)
	a.mu.Unlock()
}

func (a *Agent) takeSteering() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.steering
	a.steering = nil
	return s
}

func (a *Agent) takeFollowUp() (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.followUps) == 0 {
		return "", false
	}
	s := a.followUps[0]
	a.followUps = a.followUps[1:]
	return s, true
}

func (a *Agent) hasSteering() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.steering) > 0
}
