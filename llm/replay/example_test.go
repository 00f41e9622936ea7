package replay_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/llm/anthropic"
	"github.com/strata-agent/strata/llm/replay"
)

// ExampleTurn scripts a two-step tool conversation for the Anthropic
// Messages API — the model calls a tool, then answers from its result —
// and plays it to the real provider on a loopback server.
func ExampleTurn() {
	call, err := replay.Turn(llm.APIAnthropic, replay.Reply{
		ID: "msg_1",
		Blocks: []llm.Block{
			llm.TextBlock("Let me read the README."),
			llm.ToolUseBlock("toolu_1", "fs_read", json.RawMessage(`{"path":"README.md"}`)),
		},
		Usage: llm.Usage{Input: 20, CacheWrite: 1200, Output: 15},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	answer, err := replay.Turn(llm.APIAnthropic, replay.Reply{
		ID:     "msg_2",
		Blocks: []llm.Block{llm.TextBlock("The README describes strata.")},
		Usage:  llm.Usage{Input: 60, CacheRead: 1200, Output: 8},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := replay.NewServer(call, answer)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	p := anthropic.New(anthropic.Config{APIKey: "offline", BaseURL: srv.URL()})
	req := &llm.Request{Model: "claude-sonnet-4-5", MaxTokens: 1024, Messages: []llm.Message{llm.UserText("What is in the README?")}}
	for {
		resp, err := p.Stream(context.Background(), req, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s stop=%s cache_read=%d cache_write=%d\n", resp.ID, resp.StopReason, resp.Usage.CacheRead, resp.Usage.CacheWrite)
		for _, b := range resp.Message.Content {
			switch b.Type {
			case llm.BlockText:
				fmt.Printf("  text: %s\n", b.Text)
			case llm.BlockToolUse:
				fmt.Printf("  tool_use %s %s %s\n", b.ID, b.Name, b.Input)
			}
		}
		if resp.StopReason != llm.StopToolUse {
			break
		}
		results := []llm.Block{}
		for _, u := range resp.Message.ToolUses() {
			results = append(results, llm.ToolResultBlock(u.ID, "# strata\nA turn engine for LLM agents.", false))
		}
		req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleUser, Content: results})
	}
	fmt.Println("requests served:", len(srv.Received()))
	// Output:
	// msg_1 stop=tool_use cache_read=0 cache_write=1200
	//   text: Let me read the README.
	//   tool_use toolu_1 fs_read {"path":"README.md"}
	// msg_2 stop=end_turn cache_read=1200 cache_write=0
	//   text: The README describes strata.
	// requests served: 2
}
