package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-agent/strata/internal/waterfall"
)

// otelcol returns the OpenTelemetry Collector scripts/otelcol/build makes
// ($STRATA_OTELCOL, else ${XDG_CACHE_HOME:-~/.cache}/strata-peers/strata-otelcol).
// Absent, the test is skipped with a message — or fails under CI=true
// (.ci/run builds it).
func otelcol(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("STRATA_OTELCOL")
	if bin == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		bin = filepath.Join(cache, "strata-peers", "strata-otelcol")
	}
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("no OpenTelemetry Collector at %s: build it with scripts/otelcol/build (minutes, once)", bin)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true requires it)")
		}
		t.Skip(msg)
	}
	return bin
}

// freePort returns a port on 127.0.0.1 nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startCollector runs the collector on 127.0.0.1 with an OTLP receiver
// (HTTP on httpPort, gRPC on grpcPort) and a file exporter writing to out;
// stop ends it with SIGTERM (the exporter flushes) and waits.
func startCollector(t *testing.T, bin, out string, httpPort, grpcPort int) (stop func()) {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
      grpc:
        endpoint: 127.0.0.1:%d
exporters:
  file:
    path: %s
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
    metrics:
      receivers: [otlp]
      exporters: [file]
`, httpPort, grpcPort, out)
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", path)
	log, _ := os.Create(filepath.Join(dir, "collector.log"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Error("the collector did not stop on SIGTERM")
		}
	}
	t.Cleanup(stop)
	for _, port := range []int{httpPort, grpcPort} {
		waitFor(t, fmt.Sprintf("the collector to listen on 127.0.0.1:%d (log %s)", port, log.Name()), func() bool {
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err == nil {
				c.Close()
			}
			return err == nil
		})
	}
	return stop
}

// `OTEL_EXPORTER_OTLP_ENDPOINT=… strata run "…"` delivers the run to a real
// OpenTelemetry Collector (OTLP receiver, file exporter) as one trace with
// the GenAI attributes, over OTLP/HTTP and over gRPC, with its token usage
// and duration histograms; the waterfall of the first trace renders.
func TestTelemetryReachesARealCollector(t *testing.T) {
	bin := otelcol(t)
	out := filepath.Join(t.TempDir(), "otlp.json")
	httpPort, grpcPort := freePort(t), freePort(t)
	stop := startCollector(t, bin, out, httpPort, grpcPort)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# demo\n\nA directory to look at.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, env := range [][]string{
		{fmt.Sprintf("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%d", httpPort)},
		{fmt.Sprintf("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%d", grpcPort), "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"},
	} {
		env = append(env, "OTEL_SERVICE_NAME=strata-e2e")
		r := runCLI(t, ws, env, "run", "--approve", "all", "What is in this directory?")
		if r.code != 0 || strings.Contains(r.stderr, "telemetry") {
			t.Fatalf("%v: exit %d\n%s", env, r.code, r.stderr)
		}
	}
	stop()
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spans, metrics, err := waterfall.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	traces := map[string][]waterfall.Span{}
	var order []string
	for _, s := range spans {
		if traces[s.TraceID] == nil {
			order = append(order, s.TraceID)
		}
		traces[s.TraceID] = append(traces[s.TraceID], s)
	}
	if len(traces) != 2 {
		t.Fatalf("%d traces in the collector's file; want one per run (2)", len(traces))
	}
	for id, ss := range traces {
		ops := map[string]int{}
		var root *waterfall.Span
		for i, s := range ss {
			ops[s.Attrs["gen_ai.operation.name"]]++
			if s.ParentID == "" {
				root = &ss[i]
			}
			if s.Attrs["gen_ai.conversation.id"] == "" {
				t.Errorf("trace %s: span %s has no gen_ai.conversation.id", id, s.Name)
			}
			if s.Attrs["gen_ai.operation.name"] == "chat" && (s.Attrs["gen_ai.provider.name"] != "anthropic" ||
				s.Attrs["gen_ai.usage.input_tokens"] == "" || s.Attrs["gen_ai.response.finish_reasons"] == "" || s.Name != "chat "+s.Attrs["gen_ai.request.model"]) {
				t.Errorf("trace %s: chat span %s lacks GenAI attributes: %v", id, s.Name, s.Attrs)
			}
		}
		if root == nil || root.Name != "invoke_agent" || ops["invoke_agent"] != 1 || ops["chat"] < 2 || ops["execute_tool"] < 1 {
			t.Errorf("trace %s: operations %v (root %v); want one invoke_agent root, chats and tool calls", id, ops, root)
		}
	}
	counts := map[string]int64{}
	for _, m := range metrics {
		counts[m.Name] += m.Count
	}
	if counts["gen_ai.client.token.usage"] == 0 || counts["gen_ai.client.operation.duration"] == 0 {
		t.Errorf("metrics %v; want gen_ai.client.token.usage and gen_ai.client.operation.duration", counts)
	}
	svg := filepath.Join(t.TempDir(), "waterfall.svg")
	if p := os.Getenv("STRATA_WATERFALL_SVG"); p != "" {
		svg = p // docs/telemetry-waterfall.svg is drawn this way
	}
	w, err := os.Create(svg)
	if err != nil {
		t.Fatal(err)
	}
	if err := waterfall.SVG(w, spans, order[0], "strata run \"What is in this directory?\" (offline demo)"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b, _ := os.ReadFile(svg); !strings.Contains(string(b), "invoke_agent") || !strings.Contains(string(b), "execute_tool") {
		t.Errorf("the waterfall does not show the run's spans:\n%s", b)
	}
}

// A collector that is not there costs the run nothing but a warning: the
// answer comes, the exit status is 0, stderr says the spans were not
// delivered.
func TestTelemetryDeadCollectorOnlyWarns(t *testing.T) {
	ws := t.TempDir()
	start := time.Now()
	r := runCLI(t, ws, []string{fmt.Sprintf("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%d", freePort(t))},
		"run", "--approve", "all", "What is in this directory?")
	if r.code != 0 || r.stdout == "" {
		t.Fatalf("exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "strata: warning: ") || !strings.Contains(r.stderr, "telemetry") {
		t.Errorf("no telemetry warning on stderr:\n%s", r.stderr)
	}
	t.Logf("run with a dead collector took %s", time.Since(start))
}
