// Package archtest holds strata's architecture tests: the import rules that
// keep the layers apart (llm below prompt below agent, config and mcp
// independent, nothing outside cmd/ importing cmd/). It has no code of its
// own; see imports_test.go for the rule table.
package archtest
