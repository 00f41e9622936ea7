package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// --stream-idle-timeout, --max-retry-delay and --request-timeout reach the
// provider `strata run` builds (with its 2 retries): a stalled stream, a
// 429 asking for a 28-hour wait and a slow stream each end the run with
// exit 1 and a line naming the provider, the wait and the flag; a negative
// value is a usage error. Every command taking the run flags offers them.
func TestRunLimitFlags(t *testing.T) {
	dir := t.TempDir()
	answer, err := replay.Text(llm.APIAnthropic, "hi")
	if err != nil {
		t.Fatal(err)
	}
	stalled, slow := answer, answer
	stalled.StallAfter = 2
	slow.Delay = 200 * time.Millisecond
	limited := replay.Response{Status: 429, Header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"100000"}},
		Body: []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)}
	for _, c := range []struct {
		name     string
		flags    []string
		script   []replay.Response
		code     int
		requests int
		wants    []string
	}{
		{"stalled stream", []string{"--stream-idle-timeout", "50ms"}, []replay.Response{stalled, answer}, 1, 1,
			[]string{"anthropic: stream idle: no data from the server for 50ms", "--stream-idle-timeout"}},
		{"long retry-after", nil, []replay.Response{limited, answer}, 1, 1,
			[]string{"anthropic: HTTP 429 rate_limit_error", "not retried", "27h46m40s", "--max-retry-delay"}},
		{"slow stream", []string{"--request-timeout", "50ms"}, []replay.Response{slow, answer}, 1, 1,
			[]string{"anthropic: request timeout: no complete answer within 50ms", "--request-timeout"}},
		{"negative", []string{"--max-retry-delay", "-1s"}, nil, 2, 0, []string{"--max-retry-delay -1s"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, err := replay.NewServer(c.script...)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			args := append(append([]string{"run", "--provider", "anthropic"}, c.flags...), "hello")
			r := runCLI(t, dir, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + srv.URL()}, args...)
			if r.code != c.code {
				t.Errorf("exit %d, want %d (stderr %s)", r.code, c.code, r.stderr)
			}
			for _, w := range c.wants {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q: %s", w, r.stderr)
				}
			}
			if n := len(srv.Received()); n != c.requests {
				t.Errorf("%d requests, want %d", n, c.requests)
			}
		})
	}
	for _, cmd := range [][]string{{"run"}, {"chat"}, {"acp"}, {"sessions", "resume"}, {"sessions", "branch"}} {
		r := runCLI(t, dir, nil, append(cmd, "--help")...)
		for _, f := range []string{"--stream-idle-timeout duration", "--max-retry-delay duration", "--request-timeout duration"} {
			if !strings.Contains(r.stdout, f) {
				t.Errorf("strata %s --help lacks %s", strings.Join(cmd, " "), f)
			}
		}
	}
}

// The message-loop design: "The counted unit is a continuation round
// (TOOL_CALL -> COMPOSE_REQUEST), not a tool count." `--max-turns 1` allows
// one tool round-trip: the model's first tool call runs and its result goes
// back; a second tool call runs, but its result is not sent, and the run
// ends with the [Agent stopped: …] message and exit 1.
func TestMaxTurnsCountsToolRounds(t *testing.T) {
	dir := t.TempDir()
	call := func(id string) replay.Response {
		r, err := replay.ToolCall(llm.APIAnthropic, id, "glob", []byte(`{"pattern":"*"}`))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	answer, err := replay.Text(llm.APIAnthropic, "one round was enough")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		script   []replay.Response
		code     int
		requests int
		want     string
	}{
		{"one round fits", []replay.Response{call("toolu_1"), answer}, 0, 2, "one round was enough"},
		{"a second round stops", []replay.Response{call("toolu_1"), call("toolu_2"), answer}, 1, 2, "[Agent stopped: max turns 1 reached"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, err := replay.NewServer(c.script...)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			r := runCLI(t, dir, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + srv.URL()},
				"run", "--provider", "anthropic", "--approve", "all", "--max-turns", "1", "list the files")
			if r.code != c.code || !strings.Contains(r.stdout+r.stderr, c.want) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s\n%s", r.code, c.code, c.want, r.stdout, r.stderr)
			}
			if n := len(srv.Received()); n != c.requests {
				t.Errorf("%d model calls, want %d", n, c.requests)
			}
		})
	}
}
