package cachesim

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/token"
)

// Key identifies a block's content: a 64-bit FNV-1a hash of its kind, role and
// exact bytes. It does not depend on where the block sits in the prompt, so
// the oracle can recognise the same content at another position.
type Key uint64

// Default cache lifetimes (Anthropic docs "Prompt caching": the cache has a
// 5-minute lifetime by default, refreshed on each use; "ttl": "1h" asks for
// one hour).
const (
	TTL5m = 5 * time.Minute
	TTL1h = time.Hour
)

// ImageTokens is the flat token count FromRequest charges per image (Anthropic
// docs "Vision": about 1,600 tokens for a 1092×1092 image).
const ImageTokens = 1600

// Block is one cacheable unit of a prompt: a tool spec, a system block or one
// content block of a message.
type Block struct {
	// Key is the content hash (see Key).
	Key Key
	// Tokens is the block's token count (tokens, ≥ 0).
	Tokens int64
	// Breakpoint says a cache breakpoint closes the prefix ending with this
	// block (Anthropic cache_control on it, Bedrock cachePoint after it).
	Breakpoint bool
	// TTL is the breakpoint's cache lifetime: TTL5m or TTL1h; 0 means TTL5m.
	// Ignored when Breakpoint is false.
	TTL time.Duration
}

// Request is one model call as the simulators see it: the prompt's blocks in
// prompt order (tools → system → messages), the time it was sent and the
// number of output tokens it produced.
type Request struct {
	Blocks []Block
	At     time.Time
	Output int64 // output tokens (reasoning included)
}

// InputTokens returns the prompt's total tokens (the sum of block tokens;
// negative counts, which only bad input produces, count as 0).
func (r Request) InputTokens() int64 {
	var n int64
	for _, b := range r.Blocks {
		if b.Tokens > 0 {
			n += b.Tokens
		}
	}
	return n
}

// FromRequest converts an llm.Request into a simulator Request: one block per
// tool spec, per system block and per message content block, in that order.
// Each llm.Breakpoint marks the block it closes (BreakTools closes the last
// tool); "1h" gives TTL1h, anything else TTL5m. Breakpoints that point at no
// block are ignored (llm.Request.Validate reports them). count counts tokens
// (token.Estimator{} when nil); images count ImageTokens each; at is the send
// time and output the output tokens.
func FromRequest(req *llm.Request, count token.Counter, at time.Time, output int64) Request {
	if count == nil {
		count = token.Estimator{}
	}
	out := Request{At: at, Output: output}
	if req == nil {
		return out
	}
	n := len(req.Tools) + len(req.System)
	for _, m := range req.Messages {
		n += len(m.Content)
	}
	out.Blocks = make([]Block, 0, n)
	for _, t := range req.Tools {
		out.Blocks = append(out.Blocks, Block{
			Key:    hashParts("tool", t.Name, t.Description, string(t.InputSchema)),
			Tokens: int64(count.Count(t.Name) + count.Count(t.Description) + count.Count(string(t.InputSchema))),
		})
	}
	sysStart := len(out.Blocks)
	for _, b := range req.System {
		out.Blocks = append(out.Blocks, contentBlock("system", b, count))
	}
	msgStart := make([]int, len(req.Messages))
	for i, m := range req.Messages {
		msgStart[i] = len(out.Blocks)
		for _, b := range m.Content {
			out.Blocks = append(out.Blocks, contentBlock(string(m.Role), b, count))
		}
	}
	for _, bp := range req.Breakpoints {
		idx := -1
		switch bp.Target {
		case llm.BreakTools:
			if len(req.Tools) > 0 {
				idx = len(req.Tools) - 1
			}
		case llm.BreakSystem:
			if bp.Block >= 0 && bp.Block < len(req.System) {
				idx = sysStart + bp.Block
			}
		case llm.BreakMessage:
			if bp.Message >= 0 && bp.Message < len(req.Messages) &&
				bp.Block >= 0 && bp.Block < len(req.Messages[bp.Message].Content) {
				idx = msgStart[bp.Message] + bp.Block
			}
		}
		if idx < 0 {
			continue
		}
		out.Blocks[idx].Breakpoint = true
		ttl := TTL5m
		if bp.TTL == "1h" {
			ttl = TTL1h
		}
		// Two breakpoints on one block: keep the longer TTL.
		if ttl > out.Blocks[idx].TTL {
			out.Blocks[idx].TTL = ttl
		}
	}
	return out
}

// contentBlock returns the simulator block for one content block of the given
// role ("system", "user", "assistant").
func contentBlock(role string, b llm.Block, count token.Counter) Block {
	return Block{Key: blockKey(role, b), Tokens: blockTokens(b, count)}
}

// blockKey hashes a content block's kind, role and bytes.
func blockKey(role string, b llm.Block) Key {
	h := fnv.New64a()
	writePart(h, role)
	writeBlock(h, b)
	return Key(h.Sum64())
}

type byteWriter interface{ Write([]byte) (int, error) }

func writeBlock(h byteWriter, b llm.Block) {
	writePart(h, string(b.Type))
	writePart(h, b.Text)
	writePart(h, b.Signature)
	writePart(h, b.MediaType)
	writePart(h, string(b.Data))
	writePart(h, b.URL)
	writePart(h, b.ID)
	writePart(h, b.Name)
	writePart(h, string(b.Input))
	writePart(h, strconv.FormatBool(b.IsError))
	writePart(h, strconv.Itoa(len(b.Content)))
	for _, c := range b.Content {
		writeBlock(h, c)
	}
}

// writePart writes a length-prefixed string so that field boundaries are
// unambiguous.
func writePart(h byteWriter, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	_, _ = h.Write(n[:])
	_, _ = h.Write([]byte(s))
}

func hashParts(parts ...string) Key {
	h := fnv.New64a()
	for _, p := range parts {
		writePart(h, p)
	}
	return Key(h.Sum64())
}

// blockTokens counts a content block: text and thinking by their text,
// tool_use by name and JSON input, tool_result by its nested content, images
// at ImageTokens, redacted thinking by the estimate of its payload.
func blockTokens(b llm.Block, count token.Counter) int64 {
	switch b.Type {
	case llm.BlockImage:
		return ImageTokens
	case llm.BlockToolUse:
		return int64(count.Count(b.Name) + count.Count(string(b.Input)))
	case llm.BlockToolResult:
		var n int64
		for _, c := range b.Content {
			n += blockTokens(c, count)
		}
		return n
	case llm.BlockRedactedThinking:
		return int64(token.Estimate(string(b.Data)))
	default:
		return int64(count.Count(b.Text))
	}
}
