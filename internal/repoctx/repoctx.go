// Package repoctx gathers, for one workspace, the parts of a request's
// context that come from the repository rather than the conversation, for
// the layouts that ask for them (prompt.Needs): the file tree, the symbol
// map, the system reminder and the tiered layout's system.md files (read
// again before every request), and the URL and review context (gathered
// once, when the workspace opens). Every repository file it reads passes
// the workspace sandbox (tool.ReadFileIn; docs/security.md, "Files read
// into context").
package repoctx

import (
	"context"
	"errors"
	"fmt"
	"github.com/strata-agent/strata/agentfile"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/internal/review"
	"github.com/strata-agent/strata/internal/symbols"
	"github.com/strata-agent/strata/internal/urlcontext"
	"github.com/strata-agent/strata/internal/urlfetch"
	"github.com/strata-agent/strata/prompt"
	"github.com/strata-agent/strata/prompt/tiered"
	"github.com/strata-agent/strata/tool"
)

// DefaultReminderFile is where the system reminder is read from when
// Options.ReminderFile is empty, relative to the workspace directory: the
// tiered-assembly design's system_reminder.md, "loaded from config and
// appended to each user prompt". A missing default file means no reminder.
const DefaultReminderFile = ".strata/system_reminder.md"

// DefaultSystemFile and DefaultSystemExtraFile are the tiered-assembly
// design's system.md and system_extra.md, relative to the workspace
// directory: the system prompt is system.md (else the agent's prompt, else
// tiered.DefaultSystem) joined with system_extra.md (optional) by "\n\n",
// read again before every request so edits apply without a restart
// (docs/tiered.md, "system prompt").
const (
	DefaultSystemFile      = ".strata/system.md"
	DefaultSystemExtraFile = ".strata/system_extra.md"
)

// DefaultMaxTreeFiles caps the file tree a layout receives, in files; a
// longer list is cut with a note giving the total.
const DefaultMaxTreeFiles = 2000

// Options are what a program asks for (the fields of strata.Options of the
// same names).
type Options struct {
	Layout               string   // the layout's name (prompt.Lookup)
	URLs                 []string // URLs whose documents the layout places
	Review               string   // the review base ("" = no review)
	ReviewFiles          []string // the files the review covers ("" = all)
	ReminderFile         string   // "" = DefaultReminderFile if it exists
	Off                  bool     // strata.Options.DisableRepoContext
	WebFetchAllowPrivate bool     // fetch mentioned URLs on loopback/private addresses
}

// InputError is an error in the Options (a layout that does not place what
// was given, a missing reminder file, a bad review base): the caller must
// change its input.
type InputError struct{ Err error }

// Error returns the underlying error's message.
func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// Context gathers, for one workspace, the optional parts of
// prompt.Context a layout asks for (prompt.Needs): the file tree, the
// symbol map, the system reminder (all refreshed before every request, so
// edits show on the next one), and the URL and review context (gathered
// once, when the workspace opens). Safe for concurrent use.
type Context struct {
	reminderFile string    // absolute; "" = none
	reminderOpt  bool      // the file was named explicitly: missing is an error
	systemFiles  [2]string // absolute system.md and system_extra.md; "" = not read
	index        *symbols.Index
	urls         []prompt.URLDoc      // --url
	prompted     *urlcontext.Mentions // URLs the conversation mentions
	review       string
	off          bool // Options.Off
	sandbox      *tool.Env
}

// Open validates and gathers what o asks for in the workspace dir: every URL is
// fetched (urlfetch limits) and the review context is built now, so a bad
// URL or base fails Open with an error naming it. --url and --review with a
// layout that does not place them are an *InputError.
func Open(ctx context.Context, o Options, dir string) (*Context, error) {
	l, err := prompt.Lookup(o.Layout)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	needs := prompt.NeedsOf(l)
	if len(o.URLs) > 0 && !needs.URLs {
		return nil, inputErrorf("URLs given (%s) but layout %s does not place URL context: use --layout tiered", strings.Join(o.URLs, ", "), o.Layout)
	}
	if o.Review != "" && !needs.Review {
		return nil, inputErrorf("review base %q given but layout %s does not place review context: use --layout tiered", o.Review, o.Layout)
	}
	sandbox := &tool.Env{Workdir: dir} // the files read into context stay inside the workspace (docs/security.md)
	r := &Context{index: &symbols.Index{Root: dir, ReadFile: func(p string, max int64) ([]byte, error) {
		return tool.ReadFileIn(sandbox, p, max)
	}}, off: o.Off, sandbox: sandbox}
	if needs.Reminder && !r.off {
		r.reminderFile, r.reminderOpt = o.ReminderFile, o.ReminderFile != ""
		if !r.reminderOpt {
			r.reminderFile = DefaultReminderFile
		}
		if !filepath.IsAbs(r.reminderFile) {
			r.reminderFile = filepath.Join(dir, r.reminderFile)
		}
		if _, err := os.Stat(r.reminderFile); err != nil && r.reminderOpt {
			return nil, inputErrorf("reminder file: %v", err)
		}
	}
	if needs.SystemFiles && !r.off {
		r.systemFiles = [2]string{filepath.Join(dir, DefaultSystemFile), filepath.Join(dir, DefaultSystemExtraFile)}
	}
	f := &urlfetch.Fetcher{AllowPrivate: true} // URLs the person gave; link-local stays refused
	// URLs found in the conversation's user messages (a sub-agent's task is
	// written by the model) are fetched as web_fetch fetches: loopback and
	// private addresses only with Options.WebFetchAllowPrivate
	// (docs/security.md).
	r.prompted = urlcontext.NewMentions(&urlfetch.Fetcher{AllowPrivate: o.WebFetchAllowPrivate})
	for _, u := range o.URLs {
		d, err := urlcontext.Doc(ctx, f, u)
		if err != nil {
			return nil, err
		}
		r.urls = append(r.urls, d)
		r.prompted.Given(u)
	}
	if len(o.ReviewFiles) > 0 && o.Review == "" {
		return nil, inputErrorf("review files given (%s) without a review base", strings.Join(o.ReviewFiles, ", "))
	}
	if o.Review != "" {
		if r.review, err = review.Context(ctx, dir, o.Review, o.ReviewFiles, 0); err != nil {
			if errors.Is(err, review.ErrBase) || errors.Is(err, review.ErrFile) {
				return nil, &InputError{Err: err}
			}
			return nil, err
		}
	}
	return r, nil
}

// Apply sets cfg's context template and hooks for layout: URL and review
// context when the layout places them, and agent.Config.Gather to refresh
// the file tree, symbol map and reminder before every request (and on a
// restored loop's replay).
// Layouts that ask for none of these get an unchanged cfg.
func (r *Context) Apply(cfg *agent.Config, layout prompt.Layout) {
	needs := prompt.NeedsOf(layout)
	if needs.URLs {
		cfg.Context.URLs = r.urls
	}
	if needs.Review {
		cfg.Context.Review = r.review
	}
	if r.off || !needs.FileTree && !needs.Symbols && !needs.Reminder && !needs.SystemFiles && !needs.URLs {
		return
	}
	env := cfg.Env
	cfg.Gather = func(ctx context.Context, c *prompt.Context) error { return r.fill(ctx, env, needs, c) }
}

// fill sets the parts of c that needs asks for.
func (r *Context) fill(ctx context.Context, env *tool.Env, needs prompt.Needs, c *prompt.Context) error {
	var errs []error
	if needs.Reminder && r.reminderFile != "" {
		read := os.ReadFile // a file the person named
		if !r.reminderOpt {
			// The default file is the repository's: the sandbox applies.
			read = func(p string) ([]byte, error) { return tool.ReadFileIn(r.sandbox, p, agentfile.MaxContextFileBytes) }
		}
		b, err := read(r.reminderFile)
		switch {
		case err == nil:
			c.Reminder = strings.TrimRight(string(b), "\n")
		case r.reminderOpt || !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("reminder: %w", err))
		}
	}
	if needs.URLs && r.prompted != nil {
		docs, err := r.prompted.Gather(ctx, c.History)
		if len(docs) > 0 {
			c.URLs = append(append([]prompt.URLDoc(nil), c.URLs...), docs...)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if r.systemFiles[0] != "" {
		if err := r.fillSystem(c); err != nil {
			errs = append(errs, err)
		}
	}
	if !needs.FileTree && !needs.Symbols {
		return errors.Join(errs...)
	}
	paths, total, err := tool.ListFiles(ctx, env, 0)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	if needs.FileTree {
		c.FileTree = FileTree(paths, total, DefaultMaxTreeFiles)
	}
	if needs.Symbols {
		c.Symbols = r.index.Map(paths)
	}
	return errors.Join(errs...)
}

// FileTree formats a repository's file list the tiered-assembly design's
// way: "# File Tree (N files)", a blank line, then one path per line,
// sorted, no indentation. When there are more than max paths (max > 0),
// the first max are listed and a last line says how many were left out.
// total is the number of files in the repository (≥ len(paths)).
func FileTree(paths []string, total, max int) string {
	if total < len(paths) {
		total = len(paths)
	}
	var b strings.Builder
	b.WriteString("# File Tree (" + strconv.Itoa(total) + " files)\n\n")
	shown := paths
	if max > 0 && len(shown) > max {
		shown = shown[:max]
	}
	b.WriteString(strings.Join(shown, "\n"))
	if left := total - len(shown); left > 0 {
		fmt.Fprintf(&b, "\n\n[cut: %d more files are not listed; the list stops at %d of %d files]", left, len(shown), total)
	}
	return b.String()
}

// fillSystem sets c.System to the design's system prompt: the workspace's
// system.md, else the agent's prompt (c.System as the template has it),
// else tiered.DefaultSystem, then system_extra.md when it exists, joined
// by tiered.SystemPrompt. A missing file is fine; another read error is
// returned and the prompt keeps what could be read. The files are the
// repository's: they pass the workspace sandbox like every other file read
// into context (a system.md symlinked out of the workspace is refused).
func (r *Context) fillSystem(c *prompt.Context) error {
	read := func(path string) (string, bool, error) {
		b, err := tool.ReadFileIn(r.sandbox, path, agentfile.MaxContextFileBytes)
		switch {
		case err == nil:
			return string(b), true, nil
		case errors.Is(err, fs.ErrNotExist):
			return "", false, nil
		}
		return "", false, fmt.Errorf("system prompt: %w", err)
	}
	main, ok, err1 := read(r.systemFiles[0])
	if !ok {
		main = c.System
		if main == "" {
			main = tiered.DefaultSystem
		}
	}
	extra, _, err2 := read(r.systemFiles[1])
	c.System = tiered.SystemPrompt(main, extra)
	return errors.Join(err1, err2)
}
