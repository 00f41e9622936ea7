package event

// DesignName returns the name the message-loop design gives event e
// (docs/loop.md, "events"), or "" when the design names no such event.
// strata keeps its own kinds on the wire (the "kind" of `strata run
// --format json`, the session store, ACP) and maps them:
//
//	StagePreFired           stage_pre_fired
//	StagePostFired          stage_post_fired
//	SessionTurnStart        session_turn_start
//	SessionTurnEnd          session_turn_end
//	ProviderRequestStarted  provider_request
//	ProviderTokensStreamed  message_update (one per stream delta)
//	ProviderRequestCompleted provider_response
//	ProviderRequestFailed   provider_error
//	ToolInvocationProposed  tool_invocation_proposed
//	ToolInvocationStarted   tool_execution_start
//	ToolInvocationSucceeded tool_execution_end, outcome succeeded
//	ToolInvocationFailed    tool_execution_end, outcome failed
//	ToolInvocationCancelled tool_execution_end, outcome cancelled, denied or not_run
//	ToolCallApproved        tool_call_approved
//	ToolCallDenied          tool_call_denied
//	ToolCallModeInvoked     tool_call_mode_invoked
//
// The Rust agent-loop Turn's names (TurnStart, MessageUpdate,
// ToolExecutionEnd, …) are the kinds themselves.
func DesignName(e Event) string {
	switch e.Kind {
	case StagePreFired:
		return "StagePreFired"
	case StagePostFired:
		return "StagePostFired"
	case SessionTurnStart:
		return "SessionTurnStart"
	case SessionTurnEnd:
		return "SessionTurnEnd"
	case ProviderRequest:
		return "ProviderRequestStarted"
	case MessageUpdate:
		return "ProviderTokensStreamed"
	case ProviderResponse:
		return "ProviderRequestCompleted"
	case ProviderError:
		return "ProviderRequestFailed"
	case ToolInvocationProposed:
		return "ToolInvocationProposed"
	case ToolExecutionStart:
		return "ToolInvocationStarted"
	case ToolExecutionEnd:
		switch e.Outcome {
		case ToolSucceeded:
			return "ToolInvocationSucceeded"
		case ToolFailed:
			return "ToolInvocationFailed"
		case ToolCancelled, ToolDenied, ToolNotRun:
			return "ToolInvocationCancelled"
		}
	case ToolCallApproved:
		return "ToolCallApproved"
	case ToolCallDenied:
		return "ToolCallDenied"
	case ToolCallModeInvoked:
		return "ToolCallModeInvoked"
	}
	return ""
}
