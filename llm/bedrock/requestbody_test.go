package bedrock

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"path/filepath"
	"sync"
	"testing"

	"github.com/strata-agent/strata/internal/shared"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/replay"
)

// A complete stream succeeds even when the SDK closes the request body
// (smithy-go does so as soon as the response headers arrive) before
// net/http's write loop has finished its end-of-body check, and the rest
// of the response arrives only after that check. The test forces exactly
// that ordering with channels: the write loop's end-of-body check waits
// until the SDK reads the response (so the SDK has closed the request
// body), and the server sends the second half of the event stream only
// once the request write is over (and, when it failed, the transport has
// closed the connection). Before the fix the check read the closed body
// through WriteTo, got io.EOF as a write error, and the transport closed
// the connection under the stream: "decode event: read tcp ...: use of
// closed network connection".
//
// The test relies on net/http sending the Content-Length bytes before that
// check (it flushes the headers of a body it cannot size in memory and
// copies the body straight to the connection), as the server answers only
// once it has them.
func TestStreamSurvivesRequestBodyClosedBeforeWriteEnds(t *testing.T) {
	full, err := replay.EventStreamFile(filepath.Join(shared.Path(t, "data/wire"),
		"pydantic-ai/bedrock-eventstream-extracted/test_bedrock_model_iter_stream.0.eventstream"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		respRead   = make(chan struct{}) // the SDK read the response body: it has closed the request body
		readOnce   sync.Once
		wrote      = make(chan error, 1) // the write loop finished the request (its error)
		connClosed = make(chan struct{}) // the transport closed the TCP connection
		closeOnce  sync.Once
		release    = make(chan struct{}) // the server may send the rest of the stream
	)
	go func() {
		if err := <-wrote; err != nil {
			<-connClosed // the write loop closes the connection right after a failed write
		}
		close(release)
	}()

	half := len(full.Body) / 2
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Write(full.Body[:half])
		w.(http.Flusher).Flush()
		<-release
		w.Write(full.Body[half:])
	}))
	defer srv.Close()

	dialer := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &signalConn{Conn: c, onClose: func() { closeOnce.Do(func() { close(connClosed) }) }}, nil
	}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
			WroteRequest: func(i httptrace.WroteRequestInfo) { wrote <- i.Err },
		}))
		if r.Body == nil || r.ContentLength <= 0 {
			return nil, fmt.Errorf("request body length %d: the test needs a body of known length", r.ContentLength)
		}
		r.Body = gateEnd(r.Body, r.ContentLength, respRead)
		resp, err := tr.RoundTrip(r)
		if err == nil {
			resp.Body = &firstReadSignal{ReadCloser: resp.Body, onRead: func() { readOnce.Do(func() { close(respRead) }) }}
		}
		return resp, err
	})}

	p := mustNew(t, Config{Region: "us-east-1", AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", BaseURL: srv.URL, HTTPClient: client})
	resp, err := p.Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}}, nil)
	if err != nil {
		t.Fatalf("complete stream: %v", err)
	}
	if want := fromEvents(payloadEvents(t, full.Body)); resp.ProviderStopReason != want.Stop || resp.Usage != want.Usage {
		t.Errorf("stop %q usage %+v; want %q %+v", resp.ProviderStopReason, resp.Usage, want.Stop, want.Usage)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// signalConn calls onClose when the connection is closed.
type signalConn struct {
	net.Conn
	onClose func()
}

func (c *signalConn) Close() error {
	c.onClose()
	return c.Conn.Close()
}

// firstReadSignal calls onRead before every Read (onRead guards itself).
type firstReadSignal struct {
	io.ReadCloser
	onRead func()
}

func (b *firstReadSignal) Read(p []byte) (int, error) {
	b.onRead()
	return b.ReadCloser.Read(p)
}

// gateEnd wraps a request body of n bytes so that net/http's end-of-body
// check (the first Read after the n bytes, or WriteTo, which net/http uses
// only for that check) waits for gate; the n bytes themselves pass at once.
func gateEnd(body io.ReadCloser, n int64, gate <-chan struct{}) io.ReadCloser {
	g := &gatedEnd{ReadCloser: body, left: n, gate: gate}
	if wt, ok := body.(io.WriterTo); ok {
		return gatedEndWriterTo{g, wt}
	}
	return g
}

type gatedEnd struct {
	io.ReadCloser
	left int64 // bytes before the end-of-body check
	gate <-chan struct{}
}

func (b *gatedEnd) Read(p []byte) (int, error) {
	if b.left <= 0 {
		<-b.gate
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

type gatedEndWriterTo struct {
	*gatedEnd
	wt io.WriterTo
}

func (b gatedEndWriterTo) WriteTo(w io.Writer) (int64, error) {
	<-b.gate
	return b.wt.WriteTo(w)
}
