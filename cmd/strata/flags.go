package main

import (
	"strings"

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
