package tiered

import (
	"strconv"
	"strings"

	"github.com/strata-agent/strata/prompt"
)

// Header constants of the tiered-assembly design ("Header Constants" and
// "Block Details"; docs/tiered.md, rule 5). Each is followed directly by the
// section's content.
const (
	// RepoMapHeader opens the symbol map in the L0 system message, before
	// the legend.
	RepoMapHeader = "# Repository Structure\n\n" +
		"Below is a map of the repository showing classes, functions, and their relationships.\n" +
		"Use this to understand the codebase structure and find relevant code.\n\n"
	// TierSymbolsHeader opens the symbol entries of an L1–L3 block (and
	// strata's uncached main map, docs/tiered.md rule 3).
	TierSymbolsHeader   = "# Repository Structure (continued)\n\n"
	FilesL0Header       = "# Reference Files (Stable)\n\nThese files are included for reference:\n\n"
	FilesL1Header       = "# Reference Files\n\nThese files are included for reference:\n\n"
	FilesL2Header       = "# Reference Files (L2)\n\nThese files are included for reference:\n\n"
	FilesL3Header       = "# Reference Files (L3)\n\nThese files are included for reference:\n\n"
	FilesActiveHeader   = "# Working Files\n\nHere are the files:\n\n"
	FileTreeHeader      = "# Repository Files\n\nComplete list of files in the repository:\n\n"
	URLContextHeader    = "# URL Context\n\nThe following content was fetched from URLs mentioned in the conversation:\n\n"
	ReviewContextHeader = "# Code Review Context\n\n"
)

// Assistant acknowledgments that answer each section's user message.
const (
	Ok       = "Ok."
	URLOk    = "Ok, I've reviewed the URL content."
	ReviewOk = "Ok, I've reviewed the code changes."
)

// URLSeparator joins the URL context's documents.
const URLSeparator = "\n---\n"

var tierHeaders = [4]string{FilesL0Header, FilesL1Header, FilesL2Header, FilesL3Header}

// Fenced formats a file the design's way (docs/tiered.md, rule 6): the path, then the content in a fence
// without a language tag.
func Fenced(path, content string) string {
	return path + "\n```\n" + strings.TrimSuffix(content, "\n") + "\n```"
}

// FormatURL formats one fetched URL for the URL context: the title as a
// heading, the address, the content, then its symbol map when it has one
// under "### Symbols". The design names the parts ("title + content +
// optional symbol map"), not their layout; this is strata's.
func FormatURL(d prompt.URLDoc) string {
	title := d.Title
	if title == "" {
		title = d.URL
	}
	s := "## " + title + "\n" + d.URL + "\n\n" + strings.TrimSuffix(d.Content, "\n")
	if d.Symbols != "" {
		s += "\n\n### Symbols\n" + strings.TrimSuffix(d.Symbols, "\n")
	}
	return s
}

// URLContext returns the URL context section ("" when docs is empty).
func URLContext(docs []prompt.URLDoc) string {
	if len(docs) == 0 {
		return ""
	}
	parts := make([]string, len(docs))
	for i, d := range docs {
		parts[i] = FormatURL(d)
	}
	return URLContextHeader + strings.Join(parts, URLSeparator)
}

type entry struct {
	key, path, content string
}

// entries returns every context item as a file-like entry, in context order.
func entries(c *prompt.Context) []entry {
	var out []entry
	add := func(key, path, content string) {
		if content != "" {
			out = append(out, entry{key, path, content})
		}
	}
	add("ctx:summary", "[conversation summary]", c.Summary)
	add("ctx:task", "[task]", c.Task)
	add("ctx:knowledge", "[knowledge bases]", c.Knowledge)
	for i, h := range c.HookOutputs {
		add("ctx:hook:"+strconv.Itoa(i), "[hook output "+strconv.Itoa(i+1)+"]", h)
	}
	if len(c.Skills) > 0 {
		var b strings.Builder
		for _, s := range c.Skills {
			b.WriteString(s.Name + ": " + s.Description + " (file: " + s.Path + ")\n")
		}
		add("ctx:skills", "[skills]", b.String())
	}
	for _, f := range c.Files {
		add("file:"+f.Path, f.Path, f.Content)
	}
	return out
}

// symbolEntries returns the symbol blocks the tracker follows as
// "symbol:{path}" items: every block of the map except those of files whose
// full text is in the context (in a tier or in Working Files), which the
// design excludes from every map ("A File Never Appears Twice").
func symbolEntries(c *prompt.Context) []entry {
	if c.Symbols == nil {
		return nil
	}
	full := map[string]bool{}
	for _, f := range c.Files {
		if f.Content != "" {
			full[f.Path] = true
		}
	}
	var out []entry
	for _, b := range c.Symbols.Blocks {
		if b.Text != "" && !full[b.Path] {
			out = append(out, entry{"symbol:" + b.Path, b.Path, b.Text})
		}
	}
	return out
}

// symbolText joins symbol blocks, one per entry, each ending with a newline
// (the design's "block + \n").
func symbolText(es []entry) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(strings.TrimSuffix(e.content, "\n") + "\n")
	}
	return b.String()
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "\n\n" + b
}
