package tiered

import (
	_ "embed"
	"strings"
)

// The prompts the tiered-assembly design ships (docs/tiered.md, "system
// prompt" and "other prompts"), written for strata's tools: files in
// prompt/tiered/prompts, embedded.
var (
	// DefaultSystem is the design's main prompt, system.md: role, how to
	// read the symbol map, the edit protocol, the workflow (query → search
	// the map → trace dependencies → request files → read → edit), failure
	// recovery and context trust. The runtime sends it as system.md when
	// the workspace has no .strata/system.md and the agent no prompt.
	//
	//go:embed prompts/system.md
	DefaultSystem string
	// CommitPrompt is the design's commit.md: conventional commit style,
	// imperative mood, 50-character subject, body wrapped at 72, the
	// message only. strata has no commit-message command; the text is
	// shipped for callers that generate commit messages.
	//
	//go:embed prompts/commit.md
	CommitPrompt string
	// CompactionPrompt is the design's compaction prompt, which its topic
	// detector loads for history compaction calls: it asks for one summary
	// per topic of the oldest messages. strata's compaction writes a tl;dr
	// per message with Context Pilot's prompt (compact.TLDRPrompt); this
	// text is shipped for a topic-based summariser.
	//
	//go:embed prompts/compaction.md
	CompactionPrompt string
)

// SystemSeparator joins the main and extra system prompts: "Two files
// concatenated with \n\n".
const SystemSeparator = "\n\n"

// SystemPrompt is the design's system prompt assembly: main (system.md)
// then, when extra (system_extra.md) is not empty, SystemSeparator and
// extra. Trailing line breaks of each file are kept out of the join.
func SystemPrompt(main, extra string) string {
	main, extra = strings.TrimRight(main, "\n"), strings.TrimRight(extra, "\n")
	if extra == "" {
		return main
	}
	if main == "" {
		return extra
	}
	return main + SystemSeparator + extra
}
