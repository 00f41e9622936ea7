package workflow_test

// The tests name providers (Options.ProviderName): link every client, as
// the CLI does (llm/all).
import _ "github.com/strata-agent/strata/llm/all"
