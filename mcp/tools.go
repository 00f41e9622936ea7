package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/tool"
)

// MaxToolName is the longest tool name providers accept (Anthropic and
// OpenAI: ^[a-zA-Z0-9_-]{1,64}$).
const MaxToolName = 64

var illegal = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// ToolName returns the model-facing name of server's tool: "server___tool"
// with every character outside [a-zA-Z0-9_-] replaced by "_", prefixed with
// "_" when it does not start with a letter or "_" (Gemini's function names
// must), cut to 64 characters with a hash of the full name when longer (so
// names stay distinct). The result is a name Anthropic, OpenAI, Bedrock and
// Gemini all accept (the kiro-cli turn anatomy's make_tool_spec: "Sanitize
// names and return").
func ToolName(server, tool string) string {
	n := illegal.ReplaceAllString(server+"___"+tool, "_")
	if c := n[0]; !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		n = "_" + n
	}
	if len(n) <= MaxToolName {
		return n
	}
	h := fnv.New32a()
	h.Write([]byte(server + "/" + tool))
	suffix := fmt.Sprintf("_%08x", h.Sum32())
	return n[:MaxToolName-len(suffix)] + suffix
}

// GetToolSpecs returns server's tools as llm.ToolSpecs with model-facing
// names (ToolName), in the server's order.
func (m *Manager) GetToolSpecs(server string) ([]llm.ToolSpec, error) {
	s, _, err := m.running(server)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	tools := s.tools
	m.mu.Unlock()
	out := make([]llm.ToolSpec, 0, len(tools))
	for _, t := range tools {
		out = append(out, spec(server, t))
	}
	return out, nil
}

func spec(server string, t *sdk.Tool) llm.ToolSpec {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || string(schema) == "null" {
		schema = []byte(`{"type":"object","properties":{}}`)
	}
	return llm.ToolSpec{Name: ToolName(server, t.Name), Description: t.Description, InputSchema: schema}
}

// ExecuteTool calls server's tool (its own name) with the JSON arguments,
// within the server's timeout. Progress notifications for the call are
// passed to progress (nil = ignored). A tool's own failure is a Result with
// IsError; err reports a protocol or connection failure — a server whose
// connection broke is marked Crashed and the error says to relaunch it.
func (m *Manager) ExecuteTool(ctx context.Context, server, name string, args json.RawMessage, progress func(string)) (tool.Result, error) {
	s, sess, err := m.running(server)
	if err != nil {
		return tool.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	var a any = map[string]any{}
	if len(bytes.TrimSpace(args)) > 0 {
		a = args
	}
	p := &sdk.CallToolParams{Name: name, Arguments: a}
	if progress != nil {
		tok := "strata-" + strconv.FormatInt(m.nextTok.Add(1), 10)
		p.SetProgressToken(tok)
		m.progMu.Lock()
		m.prog[tok] = progress
		m.progMu.Unlock()
		defer func() { m.progMu.Lock(); delete(m.prog, tok); m.progMu.Unlock() }()
	}
	r, err := sess.CallTool(ctx, p)
	if err != nil {
		return tool.Result{}, m.failed(s, sess, "tools/call "+name, err)
	}
	content := blocks(r.Content)
	if len(content) == 0 && r.StructuredContent != nil {
		b, _ := json.Marshal(r.StructuredContent)
		content = []llm.Block{llm.TextBlock(string(b))}
	}
	return tool.Result{Content: content, IsError: r.IsError}, nil
}

// failed turns a request error into a clear one; when the connection is gone
// the server is marked Crashed.
func (m *Manager) failed(s *server, sess *sdk.ClientSession, what string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("MCP server %q: %s timed out after %s (the server's timeout)", s.name, what, s.cfg.timeout())
	}
	if errors.Is(err, sdk.ErrConnectionClosed) || strings.Contains(err.Error(), "connection closed") || strings.Contains(err.Error(), "EOF") {
		m.mu.Lock()
		if s.session == sess {
			s.state, s.err, s.session = Crashed, err, nil
		}
		m.mu.Unlock()
		return fmt.Errorf("%w: MCP server %q crashed during %s (%v); relaunch it", ErrNotRunning, s.name, what, err)
	}
	return fmt.Errorf("MCP server %q: %s: %w", s.name, what, err)
}

// blocks converts MCP content to content blocks: text and images as such,
// anything else (audio, resource links, embedded resources) as its JSON text.
func blocks(cs []sdk.Content) []llm.Block {
	var out []llm.Block
	for _, c := range cs {
		switch c := c.(type) {
		case *sdk.TextContent:
			out = append(out, llm.TextBlock(c.Text))
		case *sdk.ImageContent:
			out = append(out, llm.Block{Type: llm.BlockImage, MediaType: c.MIMEType, Data: c.Data})
		default:
			b, err := c.MarshalJSON()
			if err != nil {
				b = []byte(fmt.Sprintf("(unreadable %T content: %v)", c, err))
			}
			out = append(out, llm.TextBlock(string(b)))
		}
	}
	return out
}

// Tool is one MCP tool as a tool.Tool for the tool registry.
type Tool struct {
	m      *Manager
	Server string // server name
	Name   string // the server's name for the tool
	spec   llm.ToolSpec
}

// Spec returns the tool's spec with its model-facing name.
func (t *Tool) Spec() llm.ToolSpec { return t.spec }

// ConfigName is the tool's name in agent configs: "@server/tool".
func (t *Tool) ConfigName() string { return "@" + t.Server + "/" + t.Name }

// Run calls the tool; MCP progress notifications go to env.Progress.
func (t *Tool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var progress func(string)
	if env != nil {
		progress = env.Progress
	}
	return t.m.ExecuteTool(ctx, t.Server, t.Name, input, progress)
}

// Tools returns every running server's tools, by server name then server
// order. Names that collide after sanitizing keep the first.
func (m *Manager) Tools() []*Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.servers))
	for n := range m.servers {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []*Tool
	seen := map[string]bool{}
	for _, n := range names {
		s := m.servers[n]
		if s.state != Running {
			continue
		}
		for _, t := range s.tools {
			sp := spec(n, t)
			if !seen[sp.Name] {
				seen[sp.Name] = true
				out = append(out, &Tool{m: m, Server: n, Name: t.Name, spec: sp})
			}
		}
	}
	return out
}

// prefixWriter writes each line to w with prefix (nil w = discard).
func prefixWriter(w io.Writer, prefix string) io.Writer {
	if w == nil {
		return io.Discard
	}
	return &linePrefixer{w: w, prefix: prefix}
}

type linePrefixer struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (l *linePrefixer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		if _, err := fmt.Fprintf(l.w, "%s%s\n", l.prefix, l.buf[:i]); err != nil {
			return len(p), err
		}
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

// headerClient returns an HTTP client adding headers to every request.
func headerClient(h map[string]string) *http.Client {
	if len(h) == 0 {
		return nil
	}
	return &http.Client{Transport: headerTransport{h}}
}

type headerTransport struct{ h map[string]string }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}
