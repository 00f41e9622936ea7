package mcp

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A stdio server runs in Options.Dir (the workspace): a relative path in
// its command line is the workspace's, and a relative command (./srv) is
// found there. Before, servers ran in the process's directory, and a test
// run from the repository left such a server's marker file in it.
func TestStdioServerRunsInDir(t *testing.T) {
	dir := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(wd, "dir-test-ran")
	t.Cleanup(func() { os.Remove(stray) }) // what the old manager left behind
	if err := os.WriteFile(filepath.Join(dir, "srv"), []byte("#!/bin/sh\ntouch srv-ran\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := NewManager(Options{Dir: dir})
	defer m.Terminate()
	if err := m.LaunchServer(context.Background(), "marker", ServerConfig{Command: "sh", Args: []string{"-c", "touch dir-test-ran; exit 1"}}); err == nil {
		t.Fatal("LaunchServer of a server that exits at once succeeded")
	}
	if err := m.LaunchServer(context.Background(), "relative", ServerConfig{Command: "./srv"}); err == nil {
		t.Fatal("LaunchServer of a server that exits at once succeeded")
	}
	for _, f := range []string{"dir-test-ran", "srv-ran"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not in Options.Dir: the server did not run there (%v)", f, err)
		}
	}
	if _, err := os.Stat(stray); err == nil {
		t.Errorf("the server ran in the process's directory %s, not in Options.Dir", wd)
	}
}
