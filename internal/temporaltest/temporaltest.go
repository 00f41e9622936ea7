// Package temporaltest gives a test a running Temporal server on 127.0.0.1:
// the one named by STRATA_TEST_TEMPORAL (.ci/run starts it with
// scripts/temporal-dev), else a dev server this test process starts from the
// cached Temporal CLI, else the test skips with a message — and fails under
// CI=true, as internal/shared does for ../shared (docs/durable.md, "Tests").
package temporaltest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvAddress names the variable holding the HOST:PORT of a running server
// ("127.0.0.1:27233"); when set, the tests use that server and start none.
const EnvAddress = "STRATA_TEST_TEMPORAL"

// EnvBinary names the variable that overrides the path of the Temporal CLI
// (default: Binary's cache path).
const EnvBinary = "STRATA_TEMPORAL_BIN"

// Namespace is the namespace every dev server creates at start and the
// tests use.
const Namespace = "default"

// startTimeout bounds how long a self-started server may take to answer; it
// answers in well under a second on this machine (README, "Running on
// Temporal").
const startTimeout = 60 * time.Second

// Binary returns the path of the Temporal CLI: $STRATA_TEMPORAL_BIN, else
// the copy scripts/temporal-dev builds into
// ${XDG_CACHE_HOME:-~/.cache}/strata-peers/temporal/temporal. ok is false when
// no executable file is there.
func Binary() (path string, ok bool) {
	path = os.Getenv(EnvBinary)
	if path == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		path = filepath.Join(cache, "strata-peers", "temporal", "temporal")
	}
	st, err := os.Stat(path)
	return path, err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// Address returns the HOST:PORT of a running Temporal server with the
// default namespace: $STRATA_TEST_TEMPORAL when set, else a headless dev
// server (in-memory state, 127.0.0.1, a free port) started once per test
// process from Binary and killed when the process exits. Without either it
// skips t saying how to get one, except under CI=true, where it fails t. A
// server that does not come up fails t with the end of its log.
func Address(t testing.TB) string {
	t.Helper()
	if addr := os.Getenv(EnvAddress); addr != "" {
		return addr
	}
	bin, ok := Binary()
	if !ok {
		msg := fmt.Sprintf("no Temporal server: %s is unset and the Temporal CLI is not at %s "+
			"(build it with 'scripts/temporal-dev install', or run 'export %s=$(scripts/temporal-dev start)')", EnvAddress, bin, EnvAddress)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; CI=true requires it (.ci/run starts one)")
		}
		t.Skip(msg)
	}
	own.once.Do(func() { own.addr, own.err = start(bin) })
	if own.err != nil {
		t.Fatalf("starting the Temporal dev server %s: %v", bin, own.err)
	}
	return own.addr
}

// own is the dev server this test process started, shared by its tests (a
// server per test would cost a start each; tests keep apart by task queue).
var own struct {
	once sync.Once
	addr string
	err  error
}

// start runs `bin server start-dev` headless on a free loopback port and
// waits until its default namespace answers. The server gets SIGKILL when
// this process dies (Pdeathsig), so no test run leaves one behind.
func start(bin string) (string, error) {
	port, err := freePort()
	if err != nil {
		return "", err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	log := &syncWriter{}
	cmd := exec.Command(bin, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--ui-port", "0", "--http-port", "0", "--metrics-port", "0", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(startTimeout)
	for {
		if err := ready(bin, addr); err == nil {
			return addr, nil
		}
		select {
		case err := <-exited:
			return "", fmt.Errorf("the server exited (%v) before answering on %s; its output:\n%s", err, addr, log.tail())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			return "", fmt.Errorf("no answer on %s after %s; its output:\n%s", addr, startTimeout, log.tail())
		}
	}
}

// ready asks the server at addr to describe the default namespace, which it
// can only once its frontend and namespace registry are up.
func ready(bin, addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "operator", "namespace", "describe",
		"--namespace", Namespace, "--address", addr).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// freePort returns a loopback TCP port nobody listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("no TCP address from a loopback listener")
	}
	return addr.Port, nil
}

// syncWriter collects the server's stdout and stderr (written by two
// copiers, read by start).
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// tail returns the last 2 KiB of the server's output.
func (s *syncWriter) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.b.String()
	if len(out) > 2048 {
		out = "…" + out[len(out)-2048:]
	}
	return out
}
