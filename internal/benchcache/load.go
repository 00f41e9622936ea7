package benchcache

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/strata-agent/strata/trajectory"
)

// LoadDir loads every *.traj.json in dir (sorted by name) and derives each in
// scenario s with the default Derivation. It fails on an empty directory and
// names the file of any error.
func LoadDir(dir string, s Scenario) ([]*Session, error) {
	return LoadDirWith(dir, s, Derivation{})
}

// LoadDirWith is LoadDir with the derivation parameters d (see DeriveWith).
func LoadDirWith(dir string, s Scenario, d Derivation) ([]*Session, error) {
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
			return nil, err
		}
		sess, err := DeriveWith(t, s, d)
		if err != nil {
			return nil, err
		}
		out = append(out, sess)
	}
	return out, nil
}
