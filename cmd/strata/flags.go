package main

import (
	"github.com/strata-agent/strata/internal/repoctx"
	"strings"

	"github.com/spf13/pflag"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/prompt"
)

// layoutHelp is the --layout help of the commands that assemble requests;
// cobra appends the default (strata.DefaultLayout).
func layoutHelp() string {
	return "request layout: " + strings.Join(prompt.Names(), ", ") + "; " + strata.DefaultLayout +
		" is the cheapest in every 'strata bench cache' measurement (README: What the layouts cost), flat the naive baseline"
}

// agentHelp is the --agent help of the commands that load an agent.
const agentHelp = "agent name, looked up as kiro does (.kiro/agents, .amazonq/cli-agents, then ~/.kiro/agents, " +
	"~/.aws/amazonq/cli-agents), or the path of a kiro / Amazon Q agent file (JSON)"

// providerHelp is the --provider help of the commands that send (or render)
// requests.
func providerHelp() string {
	return "provider: " + strings.Join(strata.ProviderNames(), ", ") + " (openai = openai-chat)"
}

// contextFlags are the flags that add context a layout may place: URL
// context, review context and the system reminder (docs/tiered.md).
type contextFlags struct {
	urls, reviewFiles []string
	review, reminder  string
}

func (c *contextFlags) add(fl *pflag.FlagSet) {
	fl.StringArrayVar(&c.urls, "url", nil, "fetch this URL (256 KiB, 15 s) and send it as URL context (repeatable; layouts tiered, tiered-flat)")
	fl.StringVar(&c.review, "review", "", "review mode: send the summary, commit log, pre-change symbols and reverse diffs of the workspace against this git base (branch, tag or commit; layouts tiered, tiered-flat)")
	fl.StringArrayVar(&c.reviewFiles, "review-file", nil, "with --review: send the reverse diff of this changed file only (repeatable; default: every changed file)")
	fl.StringVar(&c.reminder, "reminder", "", "system reminder file appended to each prompt (default: "+repoctx.DefaultReminderFile+" when present; layouts tiered, tiered-flat)")
}

func (c *contextFlags) apply(o *strata.Options) {
	o.URLs, o.Review, o.ReviewFiles, o.ReminderFile = c.urls, c.review, c.reviewFiles, c.reminder
}
