package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
)

// KnowledgeBase is a kiro knowledge-base resource, {"type":"knowledgeBase",
// "source":"file://…", "name", "description", "indexType", "include",
// "exclude", "autoUpdate"} (kiro agent schema, ComplexResource), with its
// source resolved.
type KnowledgeBase struct {
	Name        string
	Description string
	// Source is the absolute path of the file or directory to index: the
	// "source" without "file://", "~" expanded, relative paths against the
	// project root (as file:// resources).
	Source    string
	IndexType string   // "fast", "best" or "" (kiro's default)
	Include   []string // glob patterns relative to Source
	Exclude   []string
	// AutoUpdate is kiro's re-index-on-start flag; strata indexes at every
	// load anyway.
	AutoUpdate bool
}

// knowledgeBase reads a knowledgeBase resource object, resolving its source.
func (c *collector) knowledgeBase(r Resource) (KnowledgeBase, error) {
	var o struct {
		Source, IndexType *string
		Name, Description *string
		Include, Exclude  []string
		AutoUpdate        *bool
	}
	if err := json.Unmarshal(r.Object, &o); err != nil {
		return KnowledgeBase{}, fmt.Errorf("knowledgeBase: %w", err)
	}
	if o.Source == nil || r.Location() == "" {
		return KnowledgeBase{}, fmt.Errorf("knowledgeBase without \"source\" (want \"file://<path>\")")
	}
	p := expandHome(r.Location(), c.home)
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.root, p)
	}
	kb := KnowledgeBase{Source: filepath.Clean(p), Include: o.Include, Exclude: o.Exclude}
	if o.Name != nil {
		kb.Name = *o.Name
	}
	if o.Description != nil {
		kb.Description = *o.Description
	}
	if o.IndexType != nil {
		kb.IndexType = *o.IndexType
	}
	if o.AutoUpdate != nil {
		kb.AutoUpdate = *o.AutoUpdate
	}
	return kb, nil
}
