package temporaltest

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAddressAnswers: the server Address returns (self-started, or the one
// of STRATA_TEST_TEMPORAL) listens on loopback and describes the default
// namespace; a second call reuses it.
func TestAddressAnswers(t *testing.T) {
	addr := Address(t)
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("address %q: want 127.0.0.1:PORT (%v)", addr, err)
	}
	bin, ok := Binary()
	if !ok {
		t.Skipf("no Temporal CLI at %s to ask the server with", bin)
	}
	if err := ready(bin, addr); err != nil {
		t.Fatalf("server at %s: %v", addr, err)
	}
	if again := Address(t); again != addr {
		t.Fatalf("second Address = %s, want the same server %s", again, addr)
	}
}

// TestBinaryNeedsAnExecutable: STRATA_TEMPORAL_BIN pointing at a missing or
// non-executable file is not taken for the CLI.
func TestBinaryNeedsAnExecutable(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "temporal")
	if err := os.WriteFile(plain, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "missing"), plain, dir} {
		t.Setenv(EnvBinary, p)
		if got, ok := Binary(); ok || got != p {
			t.Errorf("Binary() with %s=%s = %q, %v; want that path, not usable", EnvBinary, p, got, ok)
		}
	}
}

// TestStartReportsAFailedServer: a "CLI" that exits at once makes start
// fail with its output instead of waiting for the whole timeout.
func TestStartReportsAFailedServer(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "temporal")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho no such flag: $1 >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := start(bin)
	if err == nil || !strings.Contains(err.Error(), "no such flag: server") {
		t.Fatalf("start of a failing CLI: err = %v; want its output quoted", err)
	}
}
