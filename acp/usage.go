package acp

import (
	sdk "github.com/coder/acp-go-sdk"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
)

// promptUsage is a prompt's token usage for PromptResponse.usage (ACP's
// session usage: docs/kiro.md, "ACP updates"): the summed usage of the prompt's
// model calls (agent.Result.Usage: its turns and compaction's tl;dr
// requests; no keep-alive ping, which is never a turn) in strata's
// partition — inputTokens the uncached input, cachedReadTokens and
// cachedWriteTokens apart, outputTokens with reasoning included,
// thoughtTokens the reasoning part where the provider reports one, and
// totalTokens the sum input + cache read + cache write + output. nil when
// the prompt made no model call (res nil).
func promptUsage(res *agent.Result) *sdk.Usage {
	if res == nil {
		return nil
	}
	u := res.Usage
	out := &sdk.Usage{
		InputTokens:       int(u.Input),
		OutputTokens:      int(u.Output),
		CachedReadTokens:  sdk.Ptr(int(u.CacheRead)),
		CachedWriteTokens: sdk.Ptr(int(u.CacheWrite)),
		TotalTokens:       int(u.Input + u.CacheRead + u.CacheWrite + u.Output),
	}
	if u.Reasoning > 0 {
		out.ThoughtTokens = sdk.Ptr(int(u.Reasoning))
	}
	return out
}

// usageUpdate is the session's usage_update (strata.Session.UsageReport):
// used = the tokens the conversation holds after its last model call,
// size = the model's context window, and cost = the session's cumulative
// cost in USD when strata can price every token of it. ok is false when
// strata does not know the window or has made no model call yet: both
// numbers are required and strata sends none it does not know.
func usageUpdate(r strata.UsageReport) (sdk.SessionUpdate, bool) {
	if r.Window <= 0 || r.Context <= 0 {
		return sdk.SessionUpdate{}, false
	}
	u := &sdk.SessionUsageUpdate{SessionUpdate: "usage_update", Used: int(r.Context), Size: int(r.Window)}
	if r.Priced {
		u.Cost = &sdk.Cost{Amount: r.CostUSD, Currency: "USD"}
	}
	return sdk.SessionUpdate{UsageUpdate: u}, true
}

// sendUsage sends the session's usage_update, when it has one.
func (m *mapper) sendUsage() {
	if m.report == nil {
		return
	}
	if u, ok := usageUpdate(m.report()); ok {
		m.send(u)
	}
}
