package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/agent"
	"github.com/strata-agent/strata/durable"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// temporalBench is what 'strata bench temporal' runs: sessions concurrent
// sessions of tools execute_bash calls each, on workers 'strata worker'
// processes and then in this process, against one scripted model.
type temporalBench struct {
	temporal temporalFlags
	sessions int    // concurrent sessions per run
	workers  int    // worker processes
	tools    int    // execute_bash calls per session
	binary   string // the strata binary the workers run ("" = this executable)
	format   string // table or json
}

// benchFigures are one run's measurements: wall time from the first
// submission to the last session's end.
type benchFigures struct {
	Sessions         int     `json:"sessions"`
	ModelCalls       int     `json:"model_calls"`
	ToolCalls        int     `json:"tool_calls"`
	Seconds          float64 `json:"seconds"`
	SessionsPerSec   float64 `json:"sessions_per_s"`
	ModelCallsPerSec float64 `json:"model_calls_per_s"`
}

// temporalBenchReport compares the Temporal run with the in-process run of
// the same sessions. Ratio is the Temporal run's sessions/s divided by the
// in-process run's (the same as the model calls/s ratio, both runs making
// the same calls).
type temporalBenchReport struct {
	Workers   int          `json:"workers"`
	Temporal  benchFigures `json:"temporal"`
	InProcess benchFigures `json:"in_process"`
	Ratio     float64      `json:"ratio"`
}

func newBenchTemporalCmd() *cobra.Command {
	var b temporalBench
	cmd := &cobra.Command{
		Use:   "temporal --temporal HOST:PORT [--sessions 50] [--workers 2] [--tools 2]",
		Short: "Throughput of sessions on Temporal workers against the same sessions in-process",
		Long: `Run --sessions concurrent sessions on --workers 'strata worker' processes (started
here, polling a task queue of their own on the Temporal server --temporal), then
the same sessions in this process (the embedded SQLite path), and print sessions/s
and model calls/s of both and their ratio. Each session is one prompt whose model,
a scripted one served on 127.0.0.1, asks for --tools execute_bash calls (each
appends a line to a file: every line is checked to be written exactly once) and
then answers. The figure measures strata's and Temporal's overhead, not a
provider's latency. A dev server: scripts/temporal-dev start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !b.temporal.on() {
				return usagef("strata bench temporal needs --temporal HOST:PORT (scripts/temporal-dev start runs a dev server)")
			}
			if b.sessions < 1 || b.workers < 1 || b.tools < 0 {
				return usagef("--sessions %d, --workers %d, --tools %d: want at least 1 session and 1 worker, and 0 or more tools", b.sessions, b.workers, b.tools)
			}
			if b.format != "table" && b.format != "json" {
				return usagef("unknown --format %q (valid: table, json)", b.format)
			}
			rep, err := runTemporalBench(cmd.Context(), b, os.Stderr)
			if err != nil {
				return err
			}
			return writeTemporalBench(os.Stdout, b, rep)
		},
	}
	fl := cmd.Flags()
	b.temporal.add(fl)
	fl.IntVar(&b.sessions, "sessions", 50, "concurrent sessions per run")
	fl.IntVar(&b.workers, "workers", 2, "'strata worker' processes")
	fl.IntVar(&b.tools, "tools", 2, "execute_bash calls per session")
	fl.StringVar(&b.format, "format", "table", "table or json")
	return cmd
}

// benchPrompt is session i's prompt; the scripted model reads i back.
var benchPrompt = regexp.MustCompile(`bench session (\d+)`)

// benchModel serves the scripted model: for a request of session i with n
// tool results it asks for execute_bash "echo i-n >> marks.txt" while n <
// tools, then answers "session i done". calls counts the requests.
func benchModel(tools int, calls *atomic.Int64) (*replay.Server, error) {
	return replay.NewResponder(func(r replay.Request) replay.Response {
		calls.Add(1)
		body := string(r.Body)
		m := benchPrompt.FindStringSubmatch(body)
		if m == nil {
			return replay.Response{Status: 400, Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"no bench session in the request"}}`)}
		}
		n := strings.Count(body, `"type":"tool_result"`)
		reply := replay.Reply{Blocks: []llm.Block{llm.TextBlock("session " + m[1] + " done")}}
		if n < tools {
			in, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("echo %s-%d >> marks.txt", m[1], n)})
			reply = replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock(fmt.Sprintf("toolu_%s_%d", m[1], n), "execute_bash", in)}}
		}
		resp, err := replay.Turn(llm.APIAnthropic, reply)
		if err != nil {
			return replay.Response{Status: 500, Body: []byte(err.Error())}
		}
		return resp
	})
}

// runTemporalBench runs the Temporal run, then the in-process run, checks
// every session of both (its answer, each tool's line written once) and
// returns the figures. Progress goes to progress.
func runTemporalBench(ctx context.Context, b temporalBench, progress io.Writer) (*temporalBenchReport, error) {
	var calls atomic.Int64
	model, err := benchModel(b.tools, &calls)
	if err != nil {
		return nil, err
	}
	defer model.Close()
	tmp, err := os.MkdirTemp("", "strata-bench-temporal")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	rep := &temporalBenchReport{Workers: b.workers}

	fmt.Fprintf(progress, "strata: %d sessions on %d Temporal worker(s) at %s …\n", b.sessions, b.workers, b.temporal.addr)
	if rep.Temporal, err = benchOnTemporal(ctx, b, model.URL(), filepath.Join(tmp, "temporal"), &calls); err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "strata: the same %d sessions in-process …\n", b.sessions)
	if rep.InProcess, err = benchInProcess(ctx, b, model.URL(), filepath.Join(tmp, "inprocess"), &calls); err != nil {
		return nil, err
	}
	if rep.InProcess.SessionsPerSec > 0 {
		rep.Ratio = rep.Temporal.SessionsPerSec / rep.InProcess.SessionsPerSec
	}
	return rep, nil
}

// benchOnTemporal starts the workers in dir and runs the sessions through a
// durable.Client.
func benchOnTemporal(ctx context.Context, b temporalBench, modelURL, dir string, calls *atomic.Int64) (benchFigures, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return benchFigures{}, err
	}
	bin := b.binary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return benchFigures{}, fmt.Errorf("the strata binary for the workers: %w", err)
		}
	}
	queue := fmt.Sprintf("strata-bench-%d-%d", os.Getpid(), time.Now().UnixNano())
	env := envWith("ANTHROPIC_API_KEY=bench", "ANTHROPIC_BASE_URL="+modelURL, "STRATA_LOG_FILE=off")
	for i := range b.workers {
		w, err := startWorker(bin, dir, fmt.Sprintf("w%d", i+1), env, "--temporal", b.temporal.addr,
			"--namespace", b.temporal.namespace, "--task-queue", queue, "--store", filepath.Join(dir, "sessions.db"))
		if err != nil {
			return benchFigures{}, err
		}
		defer w.kill(syscall.SIGTERM)
	}
	c, err := b.temporal.dial(ctx)
	if err != nil {
		return benchFigures{}, err
	}
	defer c.Close()
	dc := durable.NewClient(c, queue)
	return benchSessions(b, dir, calls, func(i int) (*agent.Result, error) {
		id, err := dc.Start(ctx, durable.Spec{Dir: dir, Provider: "anthropic", Mode: agent.ModeAll})
		if err != nil {
			return nil, err
		}
		res, err := dc.Prompt(ctx, id, fmt.Sprintf("bench session %d", i))
		if endErr := dc.End(ctx, id); err == nil && endErr != nil {
			err = endErr
		}
		return res, err
	})
}

// benchInProcess runs the sessions in this process: one workspace, a
// session per prompt, recorded in a SQLite store as 'strata run' does.
func benchInProcess(ctx context.Context, b temporalBench, modelURL, dir string, calls *atomic.Int64) (benchFigures, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return benchFigures{}, err
	}
	st, err := openStore(filepath.Join(dir, "sessions.db"))
	if err != nil {
		return benchFigures{}, err
	}
	defer st.Close()
	ws, err := strata.Open(ctx, strata.Options{Dir: dir, ProviderName: "anthropic", APIKey: "bench", BaseURL: modelURL,
		Mode: agent.ModeAll, Store: st, Warn: warn})
	if err != nil {
		return benchFigures{}, err
	}
	defer ws.Close()
	return benchSessions(b, dir, calls, func(i int) (*agent.Result, error) {
		s, err := ws.NewSession(ctx, strata.SessionOptions{})
		if err != nil {
			return nil, err
		}
		res, err := s.Prompt(ctx, fmt.Sprintf("bench session %d", i))
		if cerr := s.Close(); err == nil && cerr != nil {
			err = cerr
		}
		return res, err
	})
}

// benchSessions runs session(i) for every i concurrently, times them, and
// checks each answer and dir/marks.txt (every tool call's line exactly
// once).
func benchSessions(b temporalBench, dir string, calls *atomic.Int64, session func(i int) (*agent.Result, error)) (benchFigures, error) {
	calls.Store(0)
	errs := make([]error, b.sessions)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range b.sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := session(i)
			switch want := fmt.Sprintf("session %d done", i); {
			case err != nil:
				errs[i] = fmt.Errorf("session %d: %w", i, err)
			case res == nil || res.Message.Text() != want:
				errs[i] = fmt.Errorf("session %d answered %+v, want %q", i, res, want)
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if err := errors.Join(errs...); err != nil {
		return benchFigures{}, err
	}
	if err := checkMarks(filepath.Join(dir, "marks.txt"), b.sessions, b.tools); err != nil {
		return benchFigures{}, err
	}
	n := int(calls.Load())
	return benchFigures{Sessions: b.sessions, ModelCalls: n, ToolCalls: b.sessions * b.tools, Seconds: secs,
		SessionsPerSec: float64(b.sessions) / secs, ModelCallsPerSec: float64(n) / secs}, nil
}

// checkMarks checks that file holds the line "i-k" exactly once for every
// session i and tool call k, and nothing else.
func checkMarks(file string, sessions, tools int) error {
	if tools == 0 {
		return nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("the sessions' tool calls wrote nothing: %w", err)
	}
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		seen[l]++
	}
	var bad []string
	for i := range sessions {
		for k := range tools {
			if l := strconv.Itoa(i) + "-" + strconv.Itoa(k); seen[l] != 1 {
				bad = append(bad, fmt.Sprintf("%s written %d times", l, seen[l]))
			}
			delete(seen, strconv.Itoa(i)+"-"+strconv.Itoa(k))
		}
	}
	for l, n := range seen {
		bad = append(bad, fmt.Sprintf("unexpected line %q (%d times)", l, n))
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: each tool call must write its line once: %s", file, strings.Join(bad, "; "))
	}
	return nil
}

// writeTemporalBench prints the report as a table or as JSON.
func writeTemporalBench(w io.Writer, b temporalBench, rep *temporalBenchReport) error {
	if b.format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(w, "%d concurrent sessions × %d execute_bash call(s), scripted model on 127.0.0.1\n\n", b.sessions, b.tools)
	fmt.Fprintf(w, "%-24s %8s %11s %14s\n", "", "seconds", "sessions/s", "model calls/s")
	for _, r := range []struct {
		name string
		f    benchFigures
	}{{fmt.Sprintf("Temporal, %d workers", rep.Workers), rep.Temporal}, {"in-process (SQLite)", rep.InProcess}} {
		fmt.Fprintf(w, "%-24s %8.2f %11.1f %14.1f\n", r.name, r.f.Seconds, r.f.SessionsPerSec, r.f.ModelCallsPerSec)
	}
	fmt.Fprintf(w, "\nTemporal ÷ in-process throughput: %.2f\n", rep.Ratio)
	return nil
}
