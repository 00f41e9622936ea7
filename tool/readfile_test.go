package tool

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// ReadFileIn, the reader of context files, refuses what the file tools
// refuse and what could hang or exhaust the reader: a symlink out, a
// denied file, a hard link, a FIFO (the open does not block), a device
// behind a symlink inside the workspace, a file over the limit (nothing
// read); a file within the limit is read whole.
func TestReadFileInRefuses(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	os.MkdirAll(ws, 0o755)
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "secret"), "s")
	write(filepath.Join(ws, "ok.md"), "hello")
	write(filepath.Join(ws, ".env"), "x")
	write(filepath.Join(ws, "big.md"), "0123456789")
	os.Symlink(filepath.Join(root, "secret"), filepath.Join(ws, "out.md"))
	os.Symlink("/dev/zero", filepath.Join(ws, "zero.md"))
	os.MkdirAll(filepath.Join(ws, "dev"), 0o755)
	if err := os.Link(filepath.Join(root, "secret"), filepath.Join(ws, "hard.md")); err != nil {
		t.Skipf("no hard links: %v", err)
	}
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe.md"), 0o644); err != nil {
		t.Skipf("no FIFOs: %v", err)
	}
	env := &Env{Workdir: ws, ReadPaths: PathPolicy{DeniedPaths: []string{".env"}}}
	for _, c := range []struct {
		name string
		want error
	}{
		{"out.md", ErrSandbox}, {".env", ErrSandbox}, {"hard.md", ErrSandbox}, {"zero.md", ErrSandbox},
		{"pipe.md", ErrNotRegular}, {"dev", ErrNotRegular}, {"big.md", ErrTooLarge},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadFileIn(env, filepath.Join(ws, c.name), 5); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.name, err, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the read hangs", c.name)
		}
	}
	if b, err := ReadFileIn(env, "ok.md", 5); err != nil || string(b) != "hello" {
		t.Errorf("ok.md: %q %v", b, err)
	}
}
