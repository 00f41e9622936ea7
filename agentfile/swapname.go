package agentfile

import (
	"strings"
	"unicode"
)

// SwapName returns the agent a `/agent` command's argument names, as
// kiro-cli parses it (docs/kiro.md, "MCP": the design's `/agent swap NAME`;
// kiro-cli's `parse_subcommand` in
// crates/chat-cli-v2/src/agent/acp/commands/agent/mod.rs): "swap NAME" and
// "NAME" both name NAME; "swap" followed by nothing is the agent named
// "swap", and a name that only starts with "swap" ("swapper") is kept
// whole. Surrounding space is trimmed; "" means no name (list the agents).
// The ACP server and `strata chat` both use it.
func SwapName(arg string) string {
	t := strings.TrimSpace(arg)
	if rest, ok := strings.CutPrefix(t, "swap"); ok && rest != "" && unicode.IsSpace(rune(rest[0])) {
		if name := strings.TrimSpace(rest); name != "" {
			return name
		}
	}
	return t
}
