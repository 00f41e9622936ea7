package strata

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/prompt"
)

// fileRefresher re-reads the agent's context files (file:// resources and
// always-included steering) before every request when they changed on disk
// since they were last read, so an edit made during a session reaches the
// next request (docs/panels.md, rule 4: Context Pilot's file watcher
// "triggers re-cache"; docs/kiro.md, rule 13: the context message is
// rebuilt on every turn). A change is a different modification time or
// size. One per loop; safe for concurrent use.
type fileRefresher struct {
	mu    sync.Mutex
	files map[string]*watched // by prompt.File.Path
}

// watched is the last read of one file.
type watched struct {
	agentFile
	mod    int64 // modification time, Unix ns
	size   int64
	failed bool // the last refresh could not read it (reported once)
}

// newFileRefresher watches the files of r (nil when it has none).
func newFileRefresher(r *config.Resolved) *fileRefresher {
	if r == nil {
		return nil
	}
	fr := &fileRefresher{files: map[string]*watched{}}
	for _, f := range agentFiles(r) {
		w := &watched{agentFile: f}
		if fi, err := os.Stat(f.abs); err == nil {
			w.mod, w.size = fi.ModTime().UnixNano(), fi.Size()
		}
		fr.files[f.path] = w
	}
	if len(fr.files) == 0 {
		return nil
	}
	return fr
}

// refresh returns files with the content of every watched file that
// changed on disk re-read (Refreshed = its new modification time, Unix
// ms), as a new slice; files itself is not modified. A file that cannot be
// read keeps its last content, and the error names it (once, until it
// can be read again).
func (fr *fileRefresher) refresh(files []prompt.File) ([]prompt.File, error) {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	out := append([]prompt.File(nil), files...)
	var first error
	for i, f := range out {
		w := fr.files[f.Path]
		if w == nil {
			continue
		}
		fi, err := os.Stat(w.abs)
		if err == nil && (fi.ModTime().UnixNano() != w.mod || fi.Size() != w.size) {
			err = w.reread(fi)
		}
		if err != nil {
			if first == nil && !w.failed {
				first = fmt.Errorf("context file %s: %w (its last content is sent)", w.abs, err)
			}
			w.failed = true
			continue
		}
		w.failed = false
		if w.content != f.Content {
			out[i].Content, out[i].Refreshed = w.content, w.mod/1e6
		}
	}
	return out, first
}

// reread reads w's file again; fi is its new stat.
func (w *watched) reread(fi os.FileInfo) error {
	if w.steering {
		s, err := config.LoadSteering(w.abs)
		if err != nil {
			return err
		}
		w.content = s.Body
	} else {
		b, err := os.ReadFile(w.abs)
		if err != nil {
			return err
		}
		w.content = string(b)
	}
	w.mod, w.size = fi.ModTime().UnixNano(), fi.Size()
	return nil
}

// fileRefreshHook adds to cfg a compose_request transform that sends the
// agent's context files as they are on disk now (fileRefresher). An
// unreadable file is a warning (Options.Warn); the request goes on with
// its last content.
func (w *Workspace) fileRefreshHook(cfg *agent.Config) {
	fr := newFileRefresher(w.agent.Resolved)
	if fr == nil {
		return
	}
	cfg.Hooks = append(cfg.Hooks, agent.Hook{Name: "context files", Stage: agent.StageComposeRequest, Phase: agent.PhasePre, Kind: agent.HookTransform,
		Func: func(_ context.Context, p *agent.Payload) (agent.Verdict, error) {
			files, err := fr.refresh(p.Context.Files)
			p.Context.Files = files
			if err != nil {
				w.opts.Warn(err.Error())
			}
			return agent.Verdict{}, nil
		}})
}
