package strata

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

// TrustFileName is the file, in the "strata" folder of the user's config
// directory (os.UserConfigDir: $XDG_CONFIG_HOME or ~/.config on Linux,
// ~/Library/Application Support on macOS, %AppData% on Windows), where
// DefaultTrustStore keeps trust decisions.
const TrustFileName = "trusted-workspaces.json"

// maxTrustedPerWorkspace bounds the decisions kept per workspace (one per
// agent file and version of its commands); the oldest go first.
const maxTrustedPerWorkspace = 32

// TrustStore remembers which commands the user trusted in which workspace:
// a JSON file mapping a workspace root to the hashes (TrustRequest.Hash) of
// the command sets trusted there, each with the commands as shown. A
// changed command has another hash and is asked about again.
//
// Writes replace the file atomically (a temporary file renamed over it), so
// a reader never sees half a file; two processes remembering at the same
// time may lose one of the decisions (it is asked again), never corrupt the
// file. Methods are safe for concurrent use by one process only in that
// sense.
type TrustStore struct {
	// Path is the JSON file.
	Path string
}

// trustFile is the file's content.
type trustFile struct {
	Version    int                       `json:"version"`
	Workspaces map[string][]trustedEntry `json:"workspaces"`
}

type trustedEntry struct {
	Hash      string         `json:"hash"`
	Agent     string         `json:"agent,omitempty"`
	TrustedAt time.Time      `json:"trustedAt"`
	Commands  []TrustCommand `json:"commands"`
}

// DefaultTrustStore returns the store at
// os.UserConfigDir()/strata/TrustFileName, or the error of
// os.UserConfigDir (neither $XDG_CONFIG_HOME nor $HOME set).
func DefaultTrustStore() (*TrustStore, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return nil, fmt.Errorf("trust store: %w", err)
	}
	return &TrustStore{Path: filepath.Join(dir, "strata", TrustFileName)}, nil
}

// userStrataDir is strata's folder under os.UserConfigDir (where the trust
// store and the user's settings.json live), "" when there is none.
func userStrataDir() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "strata")
}

// load reads the file; a missing file is empty.
func (s *TrustStore) load() (*trustFile, error) {
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
func (s *TrustStore) Trusted(r TrustRequest) (bool, error) {
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
func (s *TrustStore) Remember(r TrustRequest) error {
	f, err := s.load()
	if err != nil {
		return err
	}
	entries := []trustedEntry{{Hash: r.Hash, Agent: r.Agent, TrustedAt: time.Now().UTC(), Commands: r.Commands}}
	for _, e := range f.Workspaces[r.Dir] {
		if e.Hash != r.Hash && len(entries) < maxTrustedPerWorkspace {
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

// RememberedTrust returns a TrustFunc backed by store: commands the store
// remembers for the workspace are trusted at once; otherwise ask decides
// (true: trusted and remembered; false or an error: refused, the error as
// the reason). A nil ask refuses whatever the store does not hold. A
// failure to remember is not a refusal: the decision holds for this run,
// is logged with slog.Warn, and is asked again next time.
func RememberedTrust(store *TrustStore, ask func(ctx context.Context, r TrustRequest) (bool, error)) TrustFunc {
	return func(ctx context.Context, r TrustRequest) error {
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
