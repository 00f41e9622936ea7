package wsrt

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"

	"github.com/strata-agent/strata/internal/toolcheck"
	"github.com/strata-agent/strata/knowledge"
	"github.com/strata-agent/strata/tool"
)

// Readme is strata's README, the documentation introspect answers from:
// package strata sets it from its embedded README.md (a file outside this
// folder cannot be embedded here).
var Readme string

// kiroTools returns the kiro built-ins beyond tool.Builtins that the agent's
// tools allow (thinking, web_fetch, introspect, knowledge), building the
// knowledge index of the agent's knowledgeBase resources (closed by the
// workspace) and filling the context's knowledge-base listing (kiro layer
// 2). Only a database failure of the index is an error; knowledge-base
// problems are warnings.
func (w *Workspace) kiroTools(ctx context.Context) ([]tool.Tool, error) {
	cfg := w.agent.Config
	var out []tool.Tool
	var idx *knowledge.Index
	if kbs := w.agent.Resolved.Knowledge; len(kbs) > 0 {
		bases := make([]knowledge.Base, len(kbs))
		for i, k := range kbs {
			bases[i] = knowledge.Base{Name: k.Name, Description: k.Description, Source: k.Source, IndexType: k.IndexType,
				Include: k.Include, Exclude: k.Exclude}
		}
		var warns []string
		var err error
		// The sources pass the fs_read sandbox of the agent (and of the
		// agent that started it): docs/security.md, "Files read into context".
		o := knowledge.Options{Env: tool.Narrow(w.env(w.dir), w.outer), Progress: func(msg string) { slog.Info(msg, "agent", cfg.Path) }}
		if idx, warns, err = knowledge.Build(ctx, bases, o); err != nil {
			return nil, fmt.Errorf("agent %s: knowledge bases: %w", cfg.Path, err)
		}
		w.agentClosers = append(w.agentClosers, func() { idx.Close() })
		for _, wn := range warns {
			w.opts.Warn(cfg.Path + ": " + wn)
		}
		w.agent.Context.Knowledge = idx.Listing()
	}
	for _, name := range toolcheck.KiroTools {
		if !cfg.ToolAllowed(name) {
			continue
		}
		switch name {
		case "thinking":
			out = append(out, tool.Thinking{})
		case "web_fetch":
			out = append(out, &tool.WebFetch{AllowPrivate: w.opts.WebFetchAllowPrivate})
		case "introspect":
			out = append(out, &tool.Introspect{Answer: w.introspect})
		case "knowledge":
			if idx == nil {
				if slices.ContainsFunc(append(slices.Clip(cfg.Tools), cfg.AllowedTools...), func(e string) bool { return cfg.CanonicalName(e) == "knowledge" }) {
					w.opts.Warn(cfg.Path + ": \"knowledge\": the agent has no knowledgeBase resources; the knowledge tool is not offered")
				}
				continue
			}
			out = append(out, &tool.Knowledge{Index: idx})
		}
	}
	return out, nil
}

// introspect answers the introspect tool: the running agent's
// configuration, then the README sections that mention the most words of
// query (at most 3, each cut at 6000 bytes), or the README's section
// titles for an empty query.
func (w *Workspace) introspect(_ context.Context, query string) (string, error) {
	var b strings.Builder
	name := "strata's default agent"
	if c := w.agent.Config; c != nil {
		name = c.Name + " (" + c.Path + ")"
	}
	fmt.Fprintf(&b, "Agent: %s\nModel: %s (provider %s)\nLayout: %s\nTools:", name, w.prov.Model, w.prov.Name, w.opts.Layout)
	for _, t := range w.tools {
		b.WriteString(" " + t.Spec().Name)
	}
	b.WriteString("\n")
	if w.mcp != nil {
		b.WriteString("MCP servers:")
		for _, s := range w.mcp.Statuses() {
			b.WriteString(" " + s.Name + " (" + string(s.State) + ")")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	sections := strings.Split("\n"+Readme, "\n## ")[1:]
	words := strings.Fields(strings.ToLower(query))
	type scored struct {
		text  string
		score int
	}
	var hits []scored
	for _, s := range sections {
		low := strings.ToLower(s)
		n := 0
		for _, wd := range words {
			if len(wd) >= 3 {
				n += strings.Count(low, wd)
			}
		}
		if n > 0 {
			hits = append(hits, scored{"## " + s, n})
		}
	}
	if len(hits) == 0 {
		b.WriteString("strata documentation sections (ask about one of them):\n")
		for _, s := range sections {
			title, _, _ := strings.Cut(s, "\n")
			b.WriteString("- " + title + "\n")
		}
		return b.String(), nil
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	for i, h := range hits {
		if i == 3 {
			break
		}
		t := h.text
		if len(t) > 6000 {
			t = t[:6000] + "\n[section cut at 6000 bytes]"
		}
		b.WriteString(t + "\n\n")
	}
	return strings.TrimSpace(b.String()), nil
}
