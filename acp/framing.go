package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// lockedWriter serializes whole-message writes of the SDK connection and of
// the framing filter on the client's stream. It also keeps the ids of the
// client's requests still unanswered (track, answered), so that the end of
// the client's input does not drop an answer being computed (drain).
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	hooks   []writeHook
	pending map[string]bool // ids (raw JSON) of requests read and not yet answered
}

// writeHook runs fn once after a written response contains match.
type writeHook struct {
	match []byte
	fn    func()
}

// Write writes one whole message and then starts the hooks it matches.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	if id, ok := responseID(p); ok {
		delete(l.pending, id)
	}
	var run []func()
	if bytes.Contains(p, []byte(`"result"`)) {
		kept := l.hooks[:0]
		for _, h := range l.hooks {
			if bytes.Contains(p, h.match) {
				run = append(run, h.fn)
			} else {
				kept = append(kept, h)
			}
		}
		l.hooks = kept
	}
	l.mu.Unlock()
	for _, fn := range run {
		go fn()
	}
	return n, err
}

// track records that the client sent a request with this id (raw JSON).
func (l *lockedWriter) track(id string) {
	l.mu.Lock()
	if l.pending == nil {
		l.pending = map[string]bool{}
	}
	l.pending[id] = true
	l.mu.Unlock()
}

// drainGrace is how long the end of the client's input waits for answers
// already being computed (initialize, session/new, …): `echo REQUEST |
// strata acp` gets its answer. A prompt still running then is not waited
// for beyond it; the connection's end cancels it.
const drainGrace = 2 * time.Second

// drain waits until every tracked request is answered, or drainGrace.
func (l *lockedWriter) drain() {
	deadline := time.Now().Add(drainGrace)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		n := len(l.pending)
		l.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// requestID returns the id of a JSON-RPC request (a message with a method
// and an id); notifications and responses have none.
func requestID(line []byte) (string, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
		return "", false
	}
	return string(m.ID), true
}

// responseID returns the id of a JSON-RPC response written to the client.
func responseID(p []byte) (string, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(bytes.TrimSpace(p), &m) != nil || m.Method != "" || len(m.ID) == 0 {
		return "", false
	}
	return string(m.ID), true
}

// after runs fn (in a goroutine of its own) once a response containing
// match has been written — used to send updates that must follow the
// response that tells the client a session id.
func (l *lockedWriter) after(match string, fn func()) {
	l.mu.Lock()
	l.hooks = append(l.hooks, writeHook{[]byte(match), fn})
	l.mu.Unlock()
}

// JSON-RPC 2.0 error responses the SDK does not send itself: it logs and
// drops a line that is not a JSON object (JSON-RPC 2.0 §5.1 requires a
// response with id null).
var (
	parseError     = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n")
	invalidRequest = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: not a JSON object"}}` + "\n")
	notAMessage    = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: neither a request (method) nor a response (result or error)"}}` + "\n")
	badID          = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must be a string, an integer or null"}}` + "\n")
)

// validID reports whether a message's id is absent, null, a string or an
// integer (JSON-RPC 2.0 §4: "a String, Number, or NULL value"; numbers
// "SHOULD NOT contain fractional parts" — ACP uses integers). An object,
// array, boolean or fractional id cannot be matched to its response.
func validID(obj []byte) bool {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(obj, &m) != nil {
		return false
	}
	id := bytes.TrimSpace(m.ID)
	if len(id) == 0 || string(id) == "null" {
		return true
	}
	var str string
	var n int64
	return json.Unmarshal(id, &str) == nil || json.Unmarshal(id, &n) == nil
}

// isMessage reports whether a JSON object is a JSON-RPC request,
// notification or response: it has a method, a result or an error.
func isMessage(obj []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return false
	}
	_, method := m["method"]
	_, result := m["result"]
	_, failed := m["error"]
	return method || result || failed
}

// maxLine is the SDK's own line limit (10 MiB); longer lines are answered
// with a parse error instead of stopping the connection.
const maxLine = 10 << 20

// filterLines copies newline-delimited messages from in to the returned
// reader, answering lines that are not JSON objects on out; the server keeps
// serving after bad input. The reader ends when in does, once the requests
// read are answered (lockedWriter.drain; at most drainGrace).
func filterLines(in io.Reader, out *lockedWriter) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, tooLong, err := readLine(r)
			line = bytes.TrimSpace(line)
			switch {
			case tooLong || len(line) > 0 && !json.Valid(line):
				out.Write(parseError)
			case len(line) == 0:
			case line[0] != '{':
				out.Write(invalidRequest)
			case !isMessage(line):
				out.Write(notAMessage)
			case !validID(line):
				out.Write(badID)
			default:
				if id, ok := requestID(line); ok {
					out.track(id)
				}
				if _, werr := pw.Write(append(line, '\n')); werr != nil {
					return
				}
			}
			if err != nil {
				out.drain()
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// readLine returns the next line without its newline, or tooLong (and no
// bytes) when it exceeds maxLine; the whole line is consumed either way.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		frag, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > maxLine {
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if err != bufio.ErrBufferFull {
			return line, tooLong, err
		}
	}
}
