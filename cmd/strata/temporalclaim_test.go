package main

import (
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// TestTemporalClaimCheckOverThePayloadCap: a 'strata worker' whose
// conversation grows past Temporal's 2 MB payload cap — twelve fs_read
// calls of about 255 KB of random text each, 3 MB that zlib cannot shrink
// under the cap — finishes the session: the worker keeps the large
// payloads in its --store (the claim check), and the client, which has no
// store, prints every event and the answer.
func TestTemporalClaimCheckOverThePayloadCap(t *testing.T) {
	const calls = 12
	r := newTemporalRig(t, func(_ string, n int) replay.Reply {
		if n >= calls {
			return replay.Reply{Blocks: []llm.Block{llm.TextBlock("read all twelve")}}
		}
		var ops []string
		for i := 3 * n; i < 3*n+3; i++ {
			ops = append(ops, fmt.Sprintf(`{"mode":"Line","path":"f%02d.txt"}`, i))
		}
		in := json.RawMessage(`{"operations":[` + strings.Join(ops, ",") + `]}`)
		return replay.Reply{Blocks: []llm.Block{llm.ToolUseBlock(fmt.Sprintf("toolu_%d", n+1), "fs_read", in)}}
	})
	for i := range 3 * calls {
		b := make([]byte, 64_000)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		text := base64.StdEncoding.EncodeToString(b) // 85,336 bytes, under fs_read's 100,000 per operation
		var lines strings.Builder
		for len(text) > 76 {
			lines.WriteString(text[:76] + "\n")
			text = text[76:]
		}
		if err := os.WriteFile(filepath.Join(r.dir, fmt.Sprintf("f%02d.txt", i)), []byte(lines.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.startWorkers(t, 1)
	cl := r.start(t, "run", "--approve", "all", "--format", "json", "read the files")
	select {
	case err := <-cl.exited:
		if err != nil {
			t.Fatalf("client: %v\nstderr: %s\nworkers: %s", err, cl.stderr.String(), r.workerLogs())
		}
	case <-time.After(3 * time.Minute):
		cl.Process.Kill()
		t.Fatalf("the session did not end in 3 minutes\nstderr: %s\nworkers: %s", cl.stderr.String(), r.workerLogs())
	}
	evs, res := clientEvents(t, cl.stdout.String())
	if res.Answer != "read all twelve" || res.Error != "" {
		t.Fatalf("client result: %+v\nstderr: %s", res, cl.stderr.String())
	}
	whole := 0
	for _, e := range evs {
		if e.Kind == event.ToolExecutionEnd && e.ToolResult != nil && len(fullText(*e.ToolResult)) > 200_000 {
			whole++
		}
	}
	if whole != calls {
		t.Errorf("the client printed %d whole tool results of over 200 KB; want %d", whole, calls)
	}
	last := r.model.Received()
	t.Logf("%d requests, the last %d bytes", len(last), len(last[len(last)-1].Body))

	db, err := sql.Open("sqlite", r.store)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, size int64
	if err := db.QueryRow(`SELECT count(*), coalesce(sum(size), 0) FROM payloads`).Scan(&n, &size); err != nil {
		t.Fatal(err)
	}
	t.Logf("the workers' store holds %d payloads, %d bytes", n, size)
	if n == 0 || size < 2<<20 {
		t.Errorf("the workers' store holds %d payloads of %d bytes; want the conversation's requests", n, size)
	}
}
