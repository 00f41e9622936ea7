package durable

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
)

// serverAddress returns the HOST:PORT of a Temporal server for the test:
// $STRATA_TEST_TEMPORAL when set (.ci/run starts one), else a dev server
// of the Temporal CLI ($STRATA_TEMPORAL_BIN, else the cached build in
// ~/.cache/strata-peers/temporal/temporal) started on a free loopback port
// for this test; without either the test skips, and fails under CI=true.
func serverAddress(t *testing.T) string {
	if addr := os.Getenv("STRATA_TEST_TEMPORAL"); addr != "" {
		return addr
	}
	bin := os.Getenv("STRATA_TEMPORAL_BIN")
	if bin == "" {
		home, _ := os.UserHomeDir()
		bin = filepath.Join(home, ".cache", "strata-peers", "temporal", "temporal")
	}
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("no Temporal server: set STRATA_TEST_TEMPORAL or build the CLI (scripts/temporal-dev) to %s: %v", bin, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", fmt.Sprint(port),
		"--db-filename", filepath.Join(t.TempDir(), "temporal.db"), "--ui-port", "0", "--http-port", "0", "--metrics-port", "0", "--log-level", "warn")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// dial connects to the server at addr (waiting up to a minute for it to
// answer) with the given interceptors; the client closes with the test.
func dial(t *testing.T, addr string, in ...interceptor.ClientInterceptor) client.Client {
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := client.Dial(client.Options{HostPort: addr, Logger: quietLogger, Interceptors: in})
		if err == nil {
			if _, err = c.CheckHealth(t.Context(), &client.CheckHealthRequest{}); err == nil {
				t.Cleanup(c.Close)
				return c
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("Temporal server at %s did not answer: %v", addr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
