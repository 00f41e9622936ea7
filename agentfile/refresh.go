package agentfile

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/strata-agent/strata/config"
	"github.com/strata-agent/strata/prompt"
)

// Refresher re-reads the agent's context files (file:// resources and
// always-included steering) before every request when they changed on disk
// since they were last read, so an edit made during a session reaches the
// next request (docs/panels.md, rule 4: Context Pilot's file watcher
// "triggers re-cache"; docs/kiro.md, rule 13: the context message is
// rebuilt on every turn). A change is a different modification time or
// size. One per loop; safe for concurrent use.
type Refresher struct {
	mu    sync.Mutex
	read  func(string) ([]byte, error)
	files map[string]*watched // by prompt.File.Path
}

// watched is the last read of one file.
type watched struct {
	agentFile
	mod    int64 // modification time, Unix ns
	size   int64
	failed bool // the last refresh could not read it (reported once)
}

// NewRefresher watches the context files of r (nil when r is nil or has
// none), reading them again with read when they change: the same sandboxed
// reader that loaded them (ContextReader), so a file swapped for a symlink
// out of the workspace, a FIFO or a huge file after loading is refused on
// refresh too (docs/security.md, "Files read into context").
func NewRefresher(r *config.Resolved, read func(string) ([]byte, error)) *Refresher {
	if r == nil {
		return nil
	}
	fr := &Refresher{read: read, files: map[string]*watched{}}
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

// Refresh returns files with the content of every watched file that
// changed on disk re-read (Refreshed = its new modification time, Unix
// ms), as a new slice; files itself is not modified. A file that cannot be
// read keeps its last content, and the error names it (once, until it
// can be read again).
func (fr *Refresher) Refresh(files []prompt.File) ([]prompt.File, error) {
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
			err = w.reread(fi, fr.read)
		}
		if err != nil {
			if first == nil && !w.failed {
				first = fmt.Errorf("context file %s: %w (its last content is sent)", w.abs, err)
			}
			w.failed = true
		} else {
			w.failed = false
		}
		if w.content != f.Content { // the last content read, also when this read failed (not the content files had at load)
			out[i].Content, out[i].Refreshed = w.content, w.mod/1e6
		}
	}
	return out, first
}

// reread reads w's file again with read; fi is its new stat.
func (w *watched) reread(fi os.FileInfo, read func(string) ([]byte, error)) error {
	if w.steering {
		s, err := config.LoadSteeringWith(w.abs, read)
		if err != nil {
			return err
		}
		w.content = s.Body
	} else {
		b, err := read(w.abs)
		if err != nil {
			return err
		}
		w.content = string(b)
	}
	w.mod, w.size = fi.ModTime().UnixNano(), fi.Size()
	return nil
}

// refreshState is one watched file's last read, as SaveState writes it.
type refreshState struct {
	Content string `json:"content"`
	Mod     int64  `json:"mod"`
	Size    int64  `json:"size"`
	Failed  bool   `json:"failed,omitempty"`
}

// SaveState returns what the Refresher last read of each file (content,
// modification time, size, whether the last read failed) as JSON by
// prompt.File.Path, for a driver that moves a loop's hooks between
// processes (agent.HookState, docs/durable.md).
func (fr *Refresher) SaveState() (json.RawMessage, error) {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	m := make(map[string]refreshState, len(fr.files))
	for p, w := range fr.files {
		m[p] = refreshState{Content: w.content, Mod: w.mod, Size: w.size, Failed: w.failed}
	}
	return json.Marshal(m)
}

// LoadState restores what SaveState saved; files it does not name keep
// their state, and names the Refresher does not watch are ignored. A
// state that is not SaveState's JSON is an error and changes nothing.
func (fr *Refresher) LoadState(b json.RawMessage) error {
	var m map[string]refreshState
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("context files: load the refresher's state: %w", err)
	}
	fr.mu.Lock()
	defer fr.mu.Unlock()
	for p, s := range m {
		if w := fr.files[p]; w != nil {
			w.content, w.mod, w.size, w.failed = s.Content, s.Mod, s.Size, s.Failed
		}
	}
	return nil
}
