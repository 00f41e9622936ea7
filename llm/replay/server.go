// Package replay serves recorded provider responses from an HTTP server on
// 127.0.0.1, so the real provider SDKs can be driven without a network: it is
// the test harness for every provider package and the offline default of the
// CLI.
//
// A Server answers each incoming request with the next Response of its script,
// in order, and records the request it got. Responses stream their body in
// event-sized writes with a flush after each, as a real SSE server does, and
// can inject faults (a cut stream, a reset connection, a stream or a server
// that stalls and keeps the connection open).
//
// Responses come from recordings (SSEFile, ChunksFile, EventStreamFile,
// JSONFile, Cassette) or are authored: Turn writes an assistant turn (text,
// thinking, tool_use blocks, stop reason, usage) as the streamed body of any
// of the five wire APIs, so embedders and tests can script a model offline.
package replay

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Response is one recorded HTTP response.
type Response struct {
	Status int         // HTTP status; 0 means 200
	Header http.Header // response headers; Content-Type is guessed from Body when absent
	Body   []byte      // the body exactly as sent (raw SSE or JSON)
	// CutAfter, when > 0, sends only the first CutAfter bytes of Body and then
	// aborts the connection, as a dropped stream does.
	CutAfter int
	// Delay is slept before each event-sized write (for cancellation tests).
	Delay time.Duration
	// StallAfter, when > 0, sends only the first StallAfter event-sized
	// writes (SSE events, AWS event-stream messages) and then sends nothing
	// more, keeping the connection open until the client goes away or the
	// server is closed: a stream that never sends its final event.
	StallAfter int
	// StallHeaders sends nothing at all, not even the status line, and keeps
	// the connection open the same way: a server that took the request and
	// never answers.
	StallHeaders bool
	// Source names where the response came from (file path), for messages.
	Source string
}

// Request is a request the server received.
type Request struct {
	Method string
	Path   string // URL path with query, e.g. "/v1/messages?beta=true"
	Header http.Header
	Body   []byte
}

// Server is a loopback HTTP server that plays a script of responses.
// It is safe for concurrent use; requests are answered in arrival order.
type Server struct {
	srv      *http.Server
	ln       net.Listener
	closed   chan struct{} // closed by Close: ends stalled responses
	close    sync.Once
	mu       sync.Mutex
	script   []Response
	next     int
	received []Request
	respond  func(Request) Response // NewResponder's; nil = play script
}

// NewServer starts a server on 127.0.0.1 on a random free port that answers
// the n-th request with script[n]. Once the script is exhausted it answers 500
// with a JSON error naming how many responses it had. Close it when done.
func NewServer(script ...Response) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("replay: listen on 127.0.0.1: %w", err)
	}
	s := &Server{ln: ln, script: script, closed: make(chan struct{})}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // returns on Close
	return s, nil
}

// NewResponder starts a server on 127.0.0.1 that answers every request with
// respond(request) instead of a fixed script: for conversations whose order
// is not fixed (concurrent sessions, sub-agents), respond picks the answer
// from the request body. respond may be called concurrently. Close it when
// done.
func NewResponder(respond func(Request) Response) (*Server, error) {
	s, err := NewServer()
	if err != nil {
		return nil, err
	}
	s.respond = respond
	return s, nil
}

// URL returns the base URL, e.g. "http://127.0.0.1:43127".
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server and closes open connections, ending stalled
// responses. It may be called more than once.
func (s *Server) Close() error {
	s.close.Do(func() { close(s.closed) })
	return s.srv.Close()
}

// Received returns a copy of the requests received so far, in order.
func (s *Server) Received() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.received...)
}

// Remaining returns how many scripted responses have not been served.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script) - s.next
}

// ServeHTTP records r and writes the next scripted response.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.received = append(s.received, req)
	if s.respond != nil {
		s.mu.Unlock()
		s.write(w, r, s.respond(req))
		return
	}
	if s.next >= len(s.script) {
		n := len(s.script)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"replay_exhausted","message":"replay server has no response left: all %d scripted responses were served"}}`, n)
		return
	}
	resp := s.script[s.next]
	s.next++
	s.mu.Unlock()
	s.write(w, r, resp)
}

// stall blocks until the client of r goes away or the server is closed.
func (s *Server) stall(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.closed:
	}
}

func (s *Server) write(w http.ResponseWriter, r *http.Request, resp Response) {
	if resp.StallHeaders {
		s.stall(r)
		return
	}
	h := w.Header()
	for k, vs := range resp.Header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	// The body is sent as recorded; never let a recorded length or encoding
	// header contradict it.
	h.Del("Content-Length")
	h.Del("Content-Encoding")
	h.Del("Transfer-Encoding")
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", SniffContentType(resp.Body))
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	body := resp.Body
	cut := resp.CutAfter > 0 && resp.CutAfter < len(body)
	if cut {
		body = body[:resp.CutAfter]
	} else if !isEventStream(h.Get("Content-Type")) {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	fl, _ := w.(http.Flusher)
	eventStream := strings.HasPrefix(h.Get("Content-Type"), eventStreamType)
	for events := 0; len(body) > 0; events++ {
		if resp.StallAfter > 0 && events == resp.StallAfter {
			s.stall(r)
			return
		}
		n := eventEnd(body, eventStream)
		if resp.Delay > 0 {
			time.Sleep(resp.Delay)
		}
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
		body = body[n:]
	}
	if cut {
		// Abort the connection without a clean end of the chunked body.
		panic(http.ErrAbortHandler)
	}
}

// eventEnd returns the length of the first event in b: for an AWS event
// stream (eventStream) the message whose total length its first 4 bytes
// give (big-endian, AWS event-stream encoding), else the first SSE event
// (through its blank line); len(b) when b holds no complete event.
func eventEnd(b []byte, eventStream bool) int {
	if eventStream {
		if len(b) >= 4 {
			if n := int(binary.BigEndian.Uint32(b)); n >= 4 && n <= len(b) {
				return n
			}
		}
		return len(b)
	}
	if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
		return i + 2
	}
	if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
		return i + 4
	}
	return len(b)
}

func isEventStream(ct string) bool { return len(ct) >= 17 && ct[:17] == "text/event-stream" }

// SniffContentType returns "text/event-stream" for bodies that look like SSE
// (start with "event:", "data:", "id:" or ":") and "application/json"
// otherwise.
func SniffContentType(body []byte) string {
	t := bytes.TrimLeft(body, " \t\r\n")
	for _, p := range []string{"event:", "data:", "id:", ":"} {
		if bytes.HasPrefix(t, []byte(p)) {
			return "text/event-stream; charset=utf-8"
		}
	}
	return "application/json"
}

// With starts a server playing script, calls fn with its base URL, closes the
// server and returns the requests it received. It is the one-shot form tests
// use to drive an SDK client against recorded responses.
func With(fn func(baseURL string) error, script ...Response) ([]Request, error) {
	s, err := NewServer(script...)
	if err != nil {
		return nil, err
	}
	err = fn(s.URL())
	s.Close()
	return s.Received(), err
}
