package mcp

import (
	"context"
	"strings"
	"testing"
)

// A stdio server that dies before initializing is Failed, and its status
// carries the end of what it wrote to stderr.
func TestFailedServerStatusHasStderrTail(t *testing.T) {
	m := NewManager(Options{})
	defer m.Terminate()
	err := m.LaunchServer(context.Background(), "dies", ServerConfig{Command: "sh",
		Args: []string{"-c", "echo 'npm ERR! 404 package not found' >&2; echo 'see the log' >&2; exit 3"}})
	if err == nil {
		t.Fatal("LaunchServer of a server that exits at once succeeded")
	}
	st := m.Statuses()
	if len(st) != 1 || st[0].State != Failed {
		t.Fatalf("statuses = %+v, want one failed server", st)
	}
	if want := "npm ERR! 404 package not found\nsee the log"; st[0].StderrTail != want {
		t.Errorf("StderrTail = %q, want %q", st[0].StderrTail, want)
	}
}

func TestTailBufferKeepsTheLastWholeLines(t *testing.T) {
	tb := &tailBuffer{max: 16}
	for _, s := range []string{"first line\n", "second\n", "third\n"} {
		if _, err := tb.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := tb.String(); got != "second\nthird" {
		t.Errorf("String() = %q, want the whole lines that fit: %q", got, "second\nthird")
	}
	if got := (&tailBuffer{max: 16}).String(); got != "" {
		t.Errorf("empty tail = %q", got)
	}
	if got := strings.Count((*tailBuffer)(nil).String(), "x"); got != 0 {
		t.Errorf("nil tail not empty")
	}
}
