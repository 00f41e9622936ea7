package tiered

import (
	"strings"
	"testing"
)

// The design's text, copied from the tiered-assembly design ("Header
// Constants", "Block Details", "File Content Formatting"), not from this
// package: the tests compare the layout's output against these, so a change
// of a package constant fails them (docs/tiered.md, rule 5).
const (
	designFilesL0     = "# Reference Files (Stable)\n\nThese files are included for reference:\n\n"
	designFilesL1     = "# Reference Files\n\nThese files are included for reference:\n\n"
	designFilesL2     = "# Reference Files (L2)\n\nThese files are included for reference:\n\n"
	designFilesL3     = "# Reference Files (L3)\n\nThese files are included for reference:\n\n"
	designFilesActive = "# Working Files\n\nHere are the files:\n\n"
	designFileTree    = "# Repository Files\n\nComplete list of files in the repository:\n\n"
	designURLContext  = "# URL Context\n\nThe following content was fetched from URLs mentioned in the conversation:\n\n"
	designReview      = "# Code Review Context\n\n"
	designTierSymbols = "# Repository Structure (continued)\n\n"
	designOk          = "Ok."
	designURLOk       = "Ok, I've reviewed the URL content."
	designReviewOk    = "Ok, I've reviewed the code changes."
)

// designFenced is the design's file formatting: "path/to/file.py" on its
// own line, then the content in a fence with no language tag.
func designFenced(path, content string) string { return path + "\n```\n" + content + "\n```" }

// Every header and acknowledgment the layout sends is the design's text.
func TestHeadersAreTheDesignsText(t *testing.T) {
	for got, want := range map[string]string{
		FilesL0Header: designFilesL0, FilesL1Header: designFilesL1, FilesL2Header: designFilesL2, FilesL3Header: designFilesL3,
		FilesActiveHeader: designFilesActive, FileTreeHeader: designFileTree, URLContextHeader: designURLContext,
		ReviewContextHeader: designReview, TierSymbolsHeader: designTierSymbols, RepoMapHeader: designRepoMapHeader,
		Ok: designOk, URLOk: designURLOk, ReviewOk: designReviewOk,
		Fenced("src/main.py", "print(1)\n"): designFenced("src/main.py", "print(1)"),
	} {
		if got != want {
			t.Errorf("layout text %q, design %q", got, want)
		}
	}
}

// The shipped prompts carry what the design lists: system.md's six parts
// ("Role … Symbol Map … Edit Protocol … Workflow — Query → Search Map →
// Trace deps → Request files → Read → Edit … Failure Recovery … Context
// Trust"), commit.md's rules ("conventional commit style with type prefix,
// imperative mood, 50-char subject line limit, 72-char body wrap, no
// commentary"), and a compaction prompt; system.md and system_extra.md are
// "concatenated with \n\n".
func TestShippedPromptsCoverTheDesign(t *testing.T) {
	for _, want := range []string{"You are an expert coding agent", "## The symbol map", "## Edit protocol", "## Workflow",
		"Search the symbol map", "Trace their dependencies", "Ask for the files you need", "Read them before editing",
		"## When an edit fails", "## Trust only what you see", "Only trust file content shown in this context"} {
		if !strings.Contains(DefaultSystem, want) {
			t.Errorf("system.md lacks %q", want)
		}
	}
	for _, want := range []string{"Conventional commit style", "Imperative mood", "at most 50 characters", "wrapped at 72 characters", "No commentary: output the commit message only"} {
		if !strings.Contains(CommitPrompt, want) {
			t.Errorf("commit.md lacks %q", want)
		}
	}
	if !strings.Contains(CompactionPrompt, "Find where the topic changes") {
		t.Error("compaction.md is not a topic-based compaction prompt")
	}
	for _, c := range []struct{ main, extra, want string }{
		{"main\n", "extra\n", "main\n\nextra"}, {"main", "", "main"}, {"", "extra", "extra"},
	} {
		if got := SystemPrompt(c.main, c.extra); got != c.want {
			t.Errorf("SystemPrompt(%q, %q) = %q, want %q", c.main, c.extra, got, c.want)
		}
	}
}
