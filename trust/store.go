package trust

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// FileName is the file, in the "strata" folder of the user's config
// directory (os.UserConfigDir: $XDG_CONFIG_HOME or ~/.config on Linux,
// ~/Library/Application Support on macOS, %AppData% on Windows), where
// DefaultStore keeps trust decisions.
const FileName = "trusted-workspaces.json"

// maxPerWorkspace bounds the decisions kept per workspace (one per
// agent file and version of its commands); the oldest go first.
const maxPerWorkspace = 32

// Store remembers which commands the user trusted in which workspace:
// a JSON file mapping a workspace root to the hashes (Request.Hash) of
// the command sets trusted there, each with the commands as shown. A
// changed command has another hash and is asked about again.
//
// Writes replace the file atomically (a temporary file renamed over it), so
// a reader never sees half a file; two processes remembering at the same
// time may lose one of the decisions (it is asked again), never corrupt the
// file. Methods are safe for concurrent use by one process only in that
// sense.
type Store struct {
	// Path is the JSON file.
	Path string
}

// trustFile is the file's content.
type trustFile struct {
	Version    int                       `json:"version"`
	Workspaces map[string][]trustedEntry `json:"workspaces"`
}

type trustedEntry struct {
	Hash      string    `json:"hash"`
	Agent     string    `json:"agent,omitempty"`
	TrustedAt time.Time `json:"trustedAt"`
	Commands  []Command `json:"commands"`
}

// DefaultStore returns the store at
// os.UserConfigDir()/strata/FileName, or the error of
// os.UserConfigDir (neither $XDG_CONFIG_HOME nor $HOME set).
func DefaultStore() (*Store, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return nil, fmt.Errorf("trust store: %w", err)
	}
	return &Store{Path: filepath.Join(dir, "strata", FileName)}, nil
}

// load reads the file; a missing file is empty.
func (s *Store) load() (*trustFile, error) {
	f := &trustFile{Version: 1, Workspaces: map[string][]trustedEntry{}}
	raw, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust store: %w", err)
	}
	if err := json.Unmarshal(raw, f); err != nil {
		return nil, fmt.Errorf("trust store %s: not valid JSON (delete it to start over): %w", s.Path, err)
	}
	if f.Workspaces == nil {
		f.Workspaces = map[string][]trustedEntry{}
	}
	return f, nil
}

// Trusted reports whether the commands of r (r.Hash) were trusted in r.Dir.
// An unreadable or invalid file is an error.
func (s *Store) Trusted(r Request) (bool, error) {
	f, err := s.load()
	if err != nil {
		return false, err
	}
	for _, e := range f.Workspaces[r.Dir] {
		if e.Hash == r.Hash {
			return true, nil
		}
	}
	return false, nil
}

// Remember records that the commands of r are trusted in r.Dir, creating
// the file and its folder (mode 0700/0600) when needed.
func (s *Store) Remember(r Request) error {
	f, err := s.load()
	if err != nil {
		return err
	}
	entries := []trustedEntry{{Hash: r.Hash, Agent: r.Agent, TrustedAt: time.Now().UTC(), Commands: r.Commands}}
	for _, e := range f.Workspaces[r.Dir] {
		if e.Hash != r.Hash && len(entries) < maxPerWorkspace {
			entries = append(entries, e)
		}
	}
	f.Workspaces[r.Dir] = entries
	raw, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.Path), ".trust-*")
	if err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("trust store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.Path); err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	return nil
}

// Remembered returns a Func backed by store: commands the store
// remembers for the workspace are trusted at once; otherwise ask decides
// (true: trusted and remembered; false or an error: refused, the error as
// the reason). A nil ask refuses whatever the store does not hold. A
// failure to remember is not a refusal: the decision holds for this run,
// is logged with slog.Warn, and is asked again next time.
func Remembered(store *Store, ask func(ctx context.Context, r Request) (bool, error)) Func {
	return func(ctx context.Context, r Request) error {
		ok, err := store.Trusted(r)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if ask == nil {
			return fmt.Errorf("%w: %d command(s) in %s were never trusted", ErrUntrusted, len(r.Commands), r.Dir)
		}
		ok, err = ask(ctx, r)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: refused for %s", ErrUntrusted, r.Dir)
		}
		if err := store.Remember(r); err != nil {
			slog.Warn("the trust decision was not remembered; it will be asked again", "dir", r.Dir, "err", err)
		}
		return nil
	}
}
