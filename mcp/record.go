package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/strata-agent/strata/llm"
)

// RecordVersion is the version of the Record file format.
const RecordVersion = 1

// Record is what MCP servers answered to tools/list, saved so that tools can
// be priced and rendered without starting the servers again (`strata mcp
// list --record FILE` writes it, `strata bench cache --mcp-tools FILE` reads
// it; docs/kiro.md, "Recorded tool lists").
type Record struct {
	// Version is RecordVersion.
	Version int `json:"version"`
	// Recorded is when the answers were received (RFC 3339).
	Recorded time.Time `json:"recorded"`
	// Servers are the running servers' answers, sorted by name; servers that
	// failed, were disabled or crashed are left out.
	Servers []RecordedServer `json:"servers"`
}

// RecordedServer is one server's tools/list answer.
type RecordedServer struct {
	// Name is the server's name in the agent's mcpServers (or mcp.json).
	Name string `json:"name"`
	// Server is its serverInfo name and version ("" when it sent none).
	Server string `json:"server,omitempty"`
	// Tools are its tools in the server's order.
	Tools []RecordedTool `json:"tools"`
}

// RecordedTool is one tool of a RecordedServer: the server's own name (what
// an agent's tools field selects as "@server/name") and the spec the model
// is sent (the model-facing name of ToolName, description, input schema).
type RecordedTool struct {
	Name string       `json:"name"`
	Spec llm.ToolSpec `json:"spec"`
}

// Record returns the tools/list answers of every running server, sorted by
// server name.
func (m *Manager) Record() Record {
	r := Record{Version: RecordVersion, Recorded: time.Now().UTC().Truncate(time.Second), Servers: []RecordedServer{}}
	for _, st := range m.Statuses() {
		if st.State != Running {
			continue
		}
		s, _, err := m.running(st.Name)
		if err != nil {
			continue
		}
		m.mu.Lock()
		tools := s.tools
		m.mu.Unlock()
		rs := RecordedServer{Name: st.Name, Server: st.Server, Tools: []RecordedTool{}}
		for _, t := range tools {
			rs.Tools = append(rs.Tools, RecordedTool{Name: t.Name, Spec: spec(st.Name, t)})
		}
		r.Servers = append(r.Servers, rs)
	}
	return r
}

// WriteRecord writes r to path as indented JSON.
func WriteRecord(path string, r Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("MCP tools record %s: %w", path, err)
	}
	return nil
}

// LoadRecord reads a Record written by WriteRecord. Errors name the file and
// what is wrong with it (unreadable, not JSON, another version, a server
// without a name, a tool without a model-facing name).
func LoadRecord(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("MCP tools record: %w", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("MCP tools record %s: not a record (%v); write one with `strata mcp list --agent FILE --record %s`", path, err, path)
	}
	if r.Version != RecordVersion {
		return nil, fmt.Errorf("MCP tools record %s: /version: %d, want %d", path, r.Version, RecordVersion)
	}
	var errs []error
	for i, s := range r.Servers {
		if s.Name == "" {
			errs = append(errs, fmt.Errorf("MCP tools record %s: /servers/%d/name: empty", path, i))
		}
		for j, t := range s.Tools {
			if t.Name == "" || t.Spec.Name == "" {
				errs = append(errs, fmt.Errorf("MCP tools record %s: /servers/%d/tools/%d: a tool needs its name and spec.name", path, i, j))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &r, nil
}

// Server returns the recorded server named name, or nil.
func (r *Record) Server(name string) *RecordedServer {
	for i := range r.Servers {
		if r.Servers[i].Name == name {
			return &r.Servers[i]
		}
	}
	return nil
}
