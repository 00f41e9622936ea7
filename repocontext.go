package strata

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

// repoContext gathers, for one workspace, the optional parts of
// prompt.Context a layout asks for (prompt.Needs): the file tree, the
// symbol map, the system reminder (all refreshed before every request, so
// edits show on the next one), and the URL and review context (gathered
// once, when the workspace opens). Safe for concurrent use.
type repoContext struct {
	reminderFile string    // absolute; "" = none
	reminderOpt  bool      // the file was named explicitly: missing is an error
	systemFiles  [2]string // absolute system.md and system_extra.md; "" = not read
	index        *symbols.Index
	urls         []prompt.URLDoc      // --url
	prompted     *urlcontext.Mentions // URLs the conversation mentions
	review       string
	off          bool // Options.DisableRepoContext
	sandbox      *tool.Env
}

// openRepoContext validates and gathers what Options ask for: every URL is
// fetched (urlfetch limits) and the review context is built now, so a bad
// URL or base fails Open with an error naming it. --url and --review with a
// layout that does not place them are a *ConfigError.
func openRepoContext(ctx context.Context, o Options, dir string) (*repoContext, error) {
	l, err := prompt.Lookup(o.Layout)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	needs := prompt.NeedsOf(l)
	if len(o.URLs) > 0 && !needs.URLs {
		return nil, configErrorf("URLs given (%s) but layout %s does not place URL context: use --layout tiered", strings.Join(o.URLs, ", "), o.Layout)
	}
	if o.Review != "" && !needs.Review {
		return nil, configErrorf("review base %q given but layout %s does not place review context: use --layout tiered", o.Review, o.Layout)
	}
	sandbox := &tool.Env{Workdir: dir} // the files read into context stay inside the workspace (docs/security.md)
	r := &repoContext{index: &symbols.Index{Root: dir, ReadFile: func(p string, max int64) ([]byte, error) {
		return tool.ReadFileIn(sandbox, p, max)
	}}, off: o.DisableRepoContext, sandbox: sandbox}
	if needs.Reminder && !r.off {
		r.reminderFile, r.reminderOpt = o.ReminderFile, o.ReminderFile != ""
		if !r.reminderOpt {
			r.reminderFile = DefaultReminderFile
		}
		if !filepath.IsAbs(r.reminderFile) {
			r.reminderFile = filepath.Join(dir, r.reminderFile)
		}
		if _, err := os.Stat(r.reminderFile); err != nil && r.reminderOpt {
			return nil, configErrorf("reminder file: %v", err)
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
		return nil, configErrorf("review files given (%s) without a review base", strings.Join(o.ReviewFiles, ", "))
	}
	if o.Review != "" {
		if r.review, err = review.Context(ctx, dir, o.Review, o.ReviewFiles, 0); err != nil {
			if errors.Is(err, review.ErrBase) || errors.Is(err, review.ErrFile) {
				return nil, &ConfigError{Err: err}
			}
			return nil, err
		}
	}
	return r, nil
}

// apply sets cfg's context template and hooks for layout: URL and review
// context when the layout places them, and agent.Config.Gather to refresh
// the file tree, symbol map and reminder before every request (and on a
// restored loop's replay).
// Layouts that ask for none of these get an unchanged cfg.
func (r *repoContext) apply(cfg *agent.Config, layout prompt.Layout) {
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
func (r *repoContext) fill(ctx context.Context, env *tool.Env, needs prompt.Needs, c *prompt.Context) error {
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
		c.FileTree = fileTree(paths, total, DefaultMaxTreeFiles)
	}
	if needs.Symbols {
		c.Symbols = r.index.Map(paths)
	}
	return errors.Join(errs...)
}

// fileTree formats a repository's file list the tiered-assembly design's
// way: "# File Tree (N files)", a blank line, then one path per line,
// sorted, no indentation. When there are more than max paths (max > 0),
// the first max are listed and a last line says how many were left out.
// total is the number of files in the repository (≥ len(paths)).
func fileTree(paths []string, total, max int) string {
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
// returned and the prompt keeps what could be read.
func (r *repoContext) fillSystem(c *prompt.Context) error {
	read := func(path string) (string, bool, error) {
		b, err := os.ReadFile(path)
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
