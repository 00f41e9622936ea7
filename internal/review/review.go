// Package review builds the code review context of the tiered-assembly
// design (docs/tiered.md, rule 4): a summary of the changes against a base
// the user names (branch, commits, stats), the commit log, the symbol map
// of the changed files as they were at the base, and the diffs. It runs the
// git command-line tool in the repository.
package review

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-agent/strata/internal/symbols"
)

// DefaultMaxDiffBytes caps the diffs of a review context, in bytes; a
// longer diff is cut with a note naming the command that shows the rest.
const DefaultMaxDiffBytes = 256 << 10

// ErrBase is wrapped when the base does not name a commit of the
// repository.
var ErrBase = errors.New("review: base is not a commit")

// ErrFile is wrapped when a selected file is not changed since the base.
var ErrFile = errors.New("pick a changed file")

// Section headings of the review content (strata's; the design names the
// parts, not their headings).
const (
	SummaryHeading = "## Review Summary\n\n"
	LogHeading     = "## Commit Log\n\n"
	SymbolsHeading = "## Pre-change Symbol Map\n\n"
	DiffHeading    = "## Changes\n\n"
	// ReverseNote opens the diffs: the files (%s) and the base (%s).
	ReverseNote      = "Reverse diffs of %s: from the working tree back to %s (a line the change added is marked -, a line it removed +)."
	maxSymbolFiles   = 200
	maxLogCommits    = 200
	gitMissingAdvice = "install git, or run without --review"
)

// Context returns the review content for the repository at dir against
// base (a branch, tag or commit), without the "# Code Review Context"
// header the layout adds. Changes are those of the working tree against
// the base, so uncommitted edits are reviewed too. The diffs are the
// design's "reverse diffs for selected files" (docs/tiered.md, rule 4):
// `git diff -R BASE -- FILE…` of the selected files (slash-separated,
// relative to dir), from the working tree back to the base, so a line the
// change added is marked "-"; no selected file = every changed file.
// Errors: ErrBase (wrapped) for a base git cannot resolve; a git failure
// with its stderr; dir not being a git repository; a selected file that
// the change does not touch.
func Context(ctx context.Context, dir, base string, selected []string, maxDiff int) (string, error) {
	if maxDiff <= 0 {
		maxDiff = DefaultMaxDiffBytes
	}
	if strings.HasPrefix(base, "-") || base == "" {
		return "", fmt.Errorf("review base %q: want a branch, tag or commit: %w", base, ErrBase)
	}
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "core.quotepath=off"}, args...)...)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			if errors.Is(err, exec.ErrNotFound) {
				return "", fmt.Errorf("review: git not found: %s", gitMissingAdvice)
			}
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return out.String(), nil
	}
	baseID, err := git("rev-parse", "--verify", "--quiet", base+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("review base %q in %s: %w (git rev-parse found none)", base, dir, ErrBase)
	}
	baseID = strings.TrimSpace(baseID)
	branch, _ := git("rev-parse", "--abbrev-ref", "HEAD")
	head, err := git("rev-parse", "--short", "HEAD")
	if err != nil {
		return "", err
	}
	logText, err := git("log", "--no-decorate", "--format=%h %s", "-n", strconv.Itoa(maxLogCommits), baseID+"..HEAD")
	if err != nil {
		return "", err
	}
	stat, err := git("diff", "--shortstat", baseID)
	if err != nil {
		return "", err
	}
	names, err := git("diff", "--name-only", baseID)
	if err != nil {
		return "", err
	}
	changed := strings.Fields(names)
	for _, f := range selected {
		if !slices.Contains(changed, f) {
			return "", fmt.Errorf("review file %q: not changed since %s (changed: %s): %w", f, base, strings.Join(changed, ", "), ErrFile)
		}
	}
	diffArgs := []string{"diff", "-R", baseID}
	if len(selected) > 0 {
		diffArgs = append(append(diffArgs, "--"), selected...)
	}
	diff, err := git(diffArgs...)
	if err != nil {
		return "", err
	}
	commits := 0
	if l := strings.TrimSpace(logText); l != "" {
		commits = strings.Count(l, "\n") + 1
	}
	var b strings.Builder
	b.WriteString(SummaryHeading)
	fmt.Fprintf(&b, "Branch: %s (HEAD %s)\nBase: %s (%s)\nCommits: %d\n", strings.TrimSpace(branch), strings.TrimSpace(head), base, baseID[:min(12, len(baseID))], commits)
	if s := strings.TrimSpace(stat); s != "" {
		b.WriteString("Changes: " + s + "\n")
	} else {
		b.WriteString("Changes: none\n")
	}
	b.WriteString("\n" + LogHeading)
	if l := strings.TrimSpace(logText); l != "" {
		b.WriteString(l + "\n")
	} else {
		b.WriteString("(no commits since the base)\n")
	}
	if m := preChangeSymbols(git, baseID, strings.Fields(names)); m != "" {
		b.WriteString("\n" + SymbolsHeading + m)
	}
	b.WriteString("\n" + DiffHeading)
	files := "every changed file"
	if len(selected) > 0 {
		files = strings.Join(selected, ", ")
	}
	fmt.Fprintf(&b, ReverseNote+"\n\n", files, base)
	if len(diff) > maxDiff {
		cut := strings.LastIndexByte(diff[:maxDiff], '\n') + 1
		diff = diff[:cut] + fmt.Sprintf("[cut: the diff has %d bytes; the first %d are shown. Run `git %s` for the rest.]\n", len(diff), cut, strings.Join(append([]string{"diff", "-R", base}, diffArgs[3:]...), " "))
	}
	if diff == "" {
		diff = "(no changes)\n"
	}
	b.WriteString(diff)
	return b.String(), nil
}

// preChangeSymbols returns the symbol blocks of the changed files as they
// were at base (files new since the base, and languages without a parser,
// are left out).
func preChangeSymbols(git func(...string) (string, error), base string, paths []string) string {
	var b strings.Builder
	n := 0
	for _, p := range paths {
		if symbols.Language(p) == "" || n >= maxSymbolFiles {
			continue
		}
		src, err := git("show", base+":"+p)
		if err != nil {
			continue
		}
		f, err := symbols.Parse(p, []byte(src))
		if err != nil || len(f.Symbols) == 0 {
			continue
		}
		n++
		b.WriteString(symbols.Block(f, nil))
	}
	return b.String()
}
