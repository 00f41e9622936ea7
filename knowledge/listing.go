package knowledge

import (
	"context"
	"fmt"
	"strings"
)

// Listing is the knowledge-base listing of the kiro layout's layer 2 (the
// kiro-cli turn anatomy: "Knowledge base listing … Indexed knowledge
// contexts for RAG"): one line per indexed context with its id, name,
// description, source and size, under a header saying how to search them.
// The design gives no text for this layer; this one is strata's. It
// returns "" for an index with no context. The listing depends only on the
// bases and their files, so it stays the same from turn to turn.
func (x *Index) Listing() string {
	if len(x.contexts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Knowledge bases indexed for this agent (search them with the knowledge tool: command \"search\" with a query, optionally a context_id; \"show\" lists them):\n")
	for _, c := range x.contexts {
		fmt.Fprintf(&b, "- %s (context_id %s): ", c.Name, c.ID)
		if c.Description != "" {
			b.WriteString(c.Description + "; ")
		}
		fmt.Fprintf(&b, "%d files, %d chunks, from %s\n", c.Files, c.Chunks, c.Source)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// SearchLimit is how many chunks SearchText returns.
const SearchLimit = 5

// Show lists the indexed contexts for the knowledge tool's "show" command:
// the Listing's lines plus how many files were skipped.
func (x *Index) Show() string {
	if len(x.contexts) == 0 {
		return "No knowledge contexts."
	}
	var b strings.Builder
	for _, c := range x.contexts {
		fmt.Fprintf(&b, "context_id: %s\nname: %s\n", c.ID, c.Name)
		if c.Description != "" {
			fmt.Fprintf(&b, "description: %s\n", c.Description)
		}
		fmt.Fprintf(&b, "source: %s\nfiles: %d, chunks: %d, skipped files: %d (binary, over %d bytes, not a regular file, refused by the sandbox or unreadable)\nindex: lexical (BM25, SQLite FTS5)\n\n",
			c.Source, c.Files, c.Chunks, c.Skipped, MaxFileBytes)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// SearchText runs Search with SearchLimit and formats the hits for the
// knowledge tool's "search" command: per hit its context, file, line range
// and the chunk's text.
func (x *Index) SearchText(ctx context.Context, query, contextRef string) (string, error) {
	hits, err := x.Search(ctx, query, contextRef, SearchLimit)
	if err != nil {
		return "", err
	}
	if len(hits) == 0 {
		return fmt.Sprintf("No matches for %q.", query), nil
	}
	var b strings.Builder
	for i, h := range hits {
		where := h.Path
		if where == "" {
			where = "(the source file)"
		}
		fmt.Fprintf(&b, "%d. [%s] %s lines %d-%d (score %.2f)\n%s\n", i+1, h.ContextName, where, h.StartLine, h.EndLine, h.Score, h.Text)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
