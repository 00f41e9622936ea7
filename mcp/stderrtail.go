package mcp

import (
	"bytes"
	"strings"
	"sync"
)

// StderrTailBytes is how much of a stdio server's stderr the Manager keeps
// (the last bytes written) to show in Status.StderrTail.
const StderrTailBytes = 2048

// tailBuffer keeps the last max bytes written to it. Safe for concurrent
// use (the exec package copies a server's stderr on its own goroutine).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns the kept bytes from the first whole line on (when the
// buffer was cut), without trailing blank space.
func (t *tailBuffer) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) >= t.max {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i+1 < len(b) {
			b = b[i+1:]
		}
	}
	return strings.TrimRight(string(b), " \t\r\n")
}
