package benchcache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/strata-agent/strata/trajectory"
)

// LoadDir loads every *.traj.json in dir (sorted by name) and derives each in
// scenario s with the default Derivation. It fails on an empty directory and
// names the file of any error, a malformed file included (LoadDirSkipping
// goes on instead).
func LoadDir(dir string, s Scenario) ([]*Session, error) {
	return LoadDirWith(dir, s, Derivation{}, nil)
}

// LoadDirSkipping is LoadDir that leaves out the files that are not valid
// trajectories (errors.Is trajectory.ErrMalformed: not JSON, a missing or
// ill-typed field) and calls skipped with each such error, which names the
// file, line and column. A nil skipped makes a malformed file an error, as
// LoadDir does. Other errors (an unreadable file, a session that cannot be
// derived) still fail the load, and so does a directory where every file
// was skipped. skipped is called on the caller's goroutine, in file order.
func LoadDirSkipping(dir string, s Scenario, skipped func(error)) ([]*Session, error) {
	return LoadDirWith(dir, s, Derivation{}, skipped)
}

// LoadDirWith is LoadDirSkipping with the derivation parameters d (see
// DeriveWith).
func LoadDirWith(dir string, s Scenario, d Derivation, skipped func(error)) ([]*Session, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.traj.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("trajectories: %w", err)
		}
		return nil, fmt.Errorf("no *.traj.json files in %s", dir)
	}
	sort.Strings(files)
	var out []*Session
	for _, f := range files {
		t, err := trajectory.Load(f)
		if err != nil {
			if skipped != nil && errors.Is(err, trajectory.ErrMalformed) {
				skipped(err)
				continue
			}
			return nil, err
		}
		sess, err := DeriveWith(t, s, d)
		if err != nil {
			return nil, err
		}
		out = append(out, sess)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("none of the %d *.traj.json files in %s is a valid trajectory", len(files), dir)
	}
	return out, nil
}
