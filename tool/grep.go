package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/strata-agent/strata/llm"
)

//go:embed grep.md
var grepDescription string

// Limits of grep; the Grep fields override them when non-zero.
const (
	DefaultGrepMaxResults = 200    // matching lines when the input gives no max_results
	DefaultGrepMaxBytes   = 30_000 // result bytes
	grepMaxLine           = 500    // characters kept of one matching line
	grepMaxFileBytes      = 10 << 20
)

// Grep searches file contents with an RE2 regular expression, ripgrep
// style (input schema specs/grep.json, strata's own). The zero value uses
// the Default* limits.
type Grep struct {
	MaxBytes int // result bytes; 0 = DefaultGrepMaxBytes
}

// grepInput is grep's input.
type grepInput struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	Include         string `json:"include"`
	CaseInsensitive bool   `json:"case_insensitive"`
	MaxResults      *int   `json:"max_results"`
}

// Spec returns grep's spec (specs/grep.json, grep.md as description).
func (*Grep) Spec() llm.ToolSpec { return cachedSpec("grep", grepDescription) }

// Run searches every text file under path (default the workspace root; a
// file path searches that file) whose path relative to path matches include
// (a doublestar glob; one without "/" matches the file name at any depth).
// It skips .git, .gitignore'd and denied paths, binary files (a NUL byte in
// the first 8000 bytes), files over 10 MiB, symlinks that resolve outside
// the sandbox, and hard-linked files (see the package doc, "Hard links"). Each matching line is reported as "path:line:text" (path
// relative to the workspace root, text cut at 500 characters), in walk order
// (directories depth-first, names sorted) and line order. It stops after
// max_results lines (default 200) or MaxBytes of output, with a notice.
// No match is not an error.
func (t *Grep) Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	var in grepInput
	if err := json.Unmarshal(input, &in); err != nil {
		return Result{}, fmt.Errorf("grep: input: %w", err)
	}
	if in.Pattern == "" {
		return Result{}, errors.New("grep: pattern is empty")
	}
	expr := in.Pattern
	if in.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return Result{}, fmt.Errorf("grep: invalid pattern %q (RE2 syntax): %v", in.Pattern, err)
	}
	include := filepath.ToSlash(in.Include)
	if include != "" && !doublestar.ValidatePattern(include) {
		return Result{}, fmt.Errorf("grep: invalid include glob %q", in.Include)
	}
	maxResults := DefaultGrepMaxResults
	if in.MaxResults != nil && *in.MaxResults > 0 {
		maxResults = *in.MaxResults
	}
	maxBytes := orDefault(t.MaxBytes, DefaultGrepMaxBytes)
	root, isDir, err := statDir(env, "grep", in.Path)
	if err != nil {
		return Result{}, err
	}

	var out strings.Builder
	matches, skippedLarge, skippedLinked := 0, 0, 0
	stopped := ""
	search := func(file string) error {
		fi, err := os.Stat(file)
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		if env.refusesLinks(fi) {
			skippedLinked++
			return nil
		}
		if fi.Size() > grepMaxFileBytes {
			skippedLarge++
			return nil
		}
		b, err := os.ReadFile(file)
		if err != nil || isBinary(b) {
			return nil
		}
		name := displayPath(env, file)
		for i, line := range splitLines(string(b)) {
			if !re.MatchString(line) {
				continue
			}
			if matches >= maxResults {
				stopped = fmt.Sprintf("stopped after %d matching lines (max_results)", maxResults)
				return fs.SkipAll
			}
			s := fmt.Sprintf("%s:%d:%s\n", name, i+1, clipRunes(strings.ToValidUTF8(strings.TrimSuffix(line, "\r"), "\uFFFD"), grepMaxLine))
			if out.Len()+len(s) > maxBytes {
				stopped = fmt.Sprintf("stopped after %d matching lines: output is capped at %d bytes", matches, maxBytes)
				return fs.SkipAll
			}
			out.WriteString(s)
			matches++
		}
		return nil
	}
	if !isDir {
		err = search(root)
	} else {
		err = walkTree(ctx, env, root, func(p string, d fs.DirEntry) error {
			if d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			if !includeMatch(include, filepath.ToSlash(rel)) {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				target, err := ResolvePath(env, p, AccessRead)
				if err != nil {
					return nil // points outside the sandbox or is denied
				}
				p = target
			}
			return search(p)
		})
	}
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return Result{}, fmt.Errorf("grep: %w", err)
	}
	where := in.Path
	if where == "" {
		where = "."
	}
	text := strings.TrimSuffix(out.String(), "\n")
	if matches == 0 {
		text = fmt.Sprintf("No matches for pattern %q in %s.", in.Pattern, where)
	}
	if stopped != "" {
		text += fmt.Sprintf("\n[grep: %s; narrow the pattern, path or include to see more]", stopped)
	}
	if skippedLarge > 0 {
		text += fmt.Sprintf("\n[grep: skipped %d file(s) over %d bytes]", skippedLarge, grepMaxFileBytes)
	}
	if skippedLinked > 0 {
		text += fmt.Sprintf("\n[grep: skipped %d file(s) with more than one hard link]", skippedLinked)
	}
	return TextResult(text), nil
}

// includeMatch reports whether rel (slash path relative to the search root)
// passes the include glob; a glob without "/" matches the base name too.
func includeMatch(include, rel string) bool {
	if include == "" {
		return true
	}
	if ok, _ := doublestar.Match(include, rel); ok {
		return true
	}
	if !strings.Contains(include, "/") {
		ok, _ := doublestar.Match(include, filepath.Base(rel))
		return ok
	}
	return false
}

// clipRunes cuts s to at most n runes, adding "…" when cut.
func clipRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos] + "…"
		}
		i++
	}
	return s
}
