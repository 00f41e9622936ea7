package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// SEP-1699 (conformance sse-retry): a server that ends a tools/call SSE
// stream after a priming event (an id and a retry field) answers on the GET
// stream the client must reopen with Last-Event-ID. This is the conformance
// scenario's server, written out; strata failed the call before
// reconnecting was turned on.
func TestReconnectsWithLastEventID(t *testing.T) {
	var mu sync.Mutex
	var pending any // the tools/call id awaiting its answer
	var lastEventIDs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", "s1")
		if r.Method == http.MethodGet {
			mu.Lock()
			lastEventIDs = append(lastEventIDs, r.Header.Get("Last-Event-ID"))
			id := pending
			pending = nil
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "id: g1\nretry: 100\ndata: \n\n")
			if id != nil {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "resumed"}}}})
				fmt.Fprintf(w, "event: message\nid: g2\ndata: %s\n\n", b)
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		if r.Method == http.MethodDelete {
			return
		}
		var msg struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&msg)
		answer := func(result any) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
		}
		switch msg.Method {
		case "initialize":
			answer(map[string]any{"protocolVersion": "2025-03-26", "serverInfo": map[string]any{"name": "retry", "version": "1"}, "capabilities": map[string]any{"tools": map[string]any{}}})
		case "tools/list":
			answer(map[string]any{"tools": []any{map[string]any{"name": "slow", "inputSchema": map[string]any{"type": "object"}}}})
		case "tools/call":
			mu.Lock()
			pending = msg.ID
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "id: p1\nretry: 100\ndata: \n\n") // then the stream ends
		default:
			if msg.ID == nil {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			answer(map[string]any{})
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	m := NewManager(Options{})
	defer m.Terminate()
	if err := m.LaunchServer(ctx, "retry", ServerConfig{URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	r, err := m.ExecuteTool(ctx, "retry", "slow", nil, nil)
	if err != nil || len(r.Content) == 0 || r.Content[0].Text != "resumed" {
		t.Fatalf("call: %+v, %v", r, err)
	}
	mu.Lock()
	defer mu.Unlock()
	found := false
	for _, id := range lastEventIDs {
		found = found || id == "p1"
	}
	if !found {
		t.Fatalf("no GET resumed the call's stream with Last-Event-ID p1 (GETs: %q)", lastEventIDs)
	}
}
