package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An agent file or mcp.json that is a FIFO, a device or a huge file —
// something the model can create with one command, in a folder strata
// scans for agents at every spawn — is an error naming it, never a hang
// or an unbounded read (issue 23, the knowledge FIFO's sibling). os.ReadFile
// used to block on the FIFO forever.
func TestAttackConfigFilesThatAreNotFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "a.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs: %v", err)
	}
	zero := filepath.Join(dir, "z.json")
	os.Symlink("/dev/zero", zero)
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o644); err != nil || os.Truncate(big, 1<<30) != nil {
		t.Skip("no sparse file")
	}
	for _, c := range []struct {
		path, want string
		load       func(string) error
	}{
		{fifo, "not a regular file", func(p string) error { _, err := LoadAgent(p); return err }},
		{zero, "not a regular file", func(p string) error { _, err := LoadMCPConfig(p); return err }},
		{big, "over the 4194304-byte limit", func(p string) error { _, err := LoadAgent(p); return err }},
	} {
		done := make(chan error, 1)
		go func() { done <- c.load(c.path) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v; want %q", c.path, err, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: loading hangs", c.path)
		}
	}
}
