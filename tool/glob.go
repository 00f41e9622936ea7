package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/strata-agent/strata/llm"
)

//go:embed glob.md
var globDescription string

// Limits of glob.
const (
	DefaultGlobMaxResults = 500     // paths when the input gives no max_results
	globMaxCollected      = 100_000 // matches collected before the walk stops
)

// Glob finds files and directories by doublestar pattern (input schema
// specs/glob.json, strata's own). The zero value is ready to use.
type Glob struct{}

// globInput is glob's input.
type globInput struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	MaxResults *int   `json:"max_results"`
}

// Spec returns glob's spec (specs/glob.json, glob.md as description).
func (*Glob) Spec() llm.ToolSpec { return cachedSpec("glob", globDescription) }

// Run matches pattern (github.com/bmatcuk/doublestar/v4 syntax: *, **, ?,
// [..], {a,b}) against the slash paths of the entries below path (default
// the workspace root), relative to path. An absolute pattern is split into
// its directory (used as path) and the rest. .git, .gitignore'd and denied
// entries are skipped; symlinks are listed, not followed. The result lists
// the matches relative to the workspace root, sorted, one per line,
// directories with a trailing "/", at most max_results (default 500) with a
// notice giving the total. No match is not an error.
func (t *Glob) Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	var in globInput
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, fmt.Errorf("glob: input: %w", err)
	}
	pattern := filepath.ToSlash(in.Pattern)
	if filepath.IsAbs(in.Pattern) {
		base, rest := doublestar.SplitPattern(pattern)
		if in.Path == "" {
			in.Path = filepath.FromSlash(base)
			pattern = rest
		}
	}
	pattern = strings.TrimPrefix(pattern, "./")
	if pattern == "" {
		return Result{}, errors.New("glob: pattern is empty")
	}
	if !doublestar.ValidatePattern(pattern) {
		return Result{}, fmt.Errorf("glob: invalid pattern %q", in.Pattern)
	}
	maxResults := DefaultGlobMaxResults
	if in.MaxResults != nil && *in.MaxResults > 0 {
		maxResults = *in.MaxResults
	}
	root, isDir, err := statDir(env, "glob", in.Path)
	if err != nil {
		return Result{}, err
	}
	if !isDir {
		return Result{}, fmt.Errorf("glob: path %q is not a directory", in.Path)
	}
	// Without "**" a match is at most as deep as the pattern has segments.
	maxDepth := -1
	if !strings.Contains(pattern, "**") {
		maxDepth = strings.Count(pattern, "/") + 1
	}
	var found []string
	more := false
	err = walkTree(ctx, env, root, func(p string, d fs.DirEntry) error {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if ok, _ := doublestar.Match(pattern, rel); ok {
			if len(found) >= globMaxCollected {
				more = true
				return fs.SkipAll
			}
			name := displayPath(env, p)
			if d.IsDir() {
				name += "/"
			}
			found = append(found, name)
		}
		if d.IsDir() && maxDepth >= 0 && strings.Count(rel, "/")+1 >= maxDepth {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return Result{}, fmt.Errorf("glob: %w", err)
	}
	where := in.Path
	if where == "" {
		where = "."
	}
	if len(found) == 0 {
		return TextResult(fmt.Sprintf("No paths match %q in %s.", in.Pattern, where)), nil
	}
	sort.Strings(found)
	total := len(found)
	if total > maxResults {
		found = found[:maxResults]
	}
	text := strings.Join(found, "\n")
	switch {
	case more:
		text += fmt.Sprintf("\n[glob: more than %d paths match; showing the first %d; narrow the pattern or path]", globMaxCollected, len(found))
	case total > maxResults:
		text += fmt.Sprintf("\n[glob: %d paths match; showing the first %d; narrow the pattern or path, or raise max_results]", total, maxResults)
	}
	return TextResult(text), nil
}
