package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"

	"github.com/strata-agent/strata/llm"
)

// Tool inputs are kept in one canonical JSON form — compact, keys in the
// order the model wrote them, strings as encoding/json writes them but
// with <, > and & left as they are — so that the history is the same bytes
// whether or not the State went through JSON (encoding/json escapes those
// three characters inside a json.RawMessage it writes) and a layout counts
// the same tokens either way. The form is a function of the JSON value's
// tokens, so applying it again changes nothing. An input that is not valid
// JSON is kept as it is.

// canonicalInput returns raw in the canonical form (raw itself when it is
// not valid JSON).
func canonicalInput(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var buf bytes.Buffer
	type frame struct {
		obj bool
		n   int // tokens written in it (keys and values)
	}
	var stack []frame
	sep := func() {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		switch {
		case f.obj && f.n%2 == 1:
			buf.WriteByte(':')
		case f.n > 0:
			buf.WriteByte(',')
		}
		f.n++
	}
	str := json.NewEncoder(&buf)
	str.SetEscapeHTML(false)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return raw
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				sep()
				buf.WriteByte(byte(v))
				stack = append(stack, frame{obj: v == '{'})
				continue
			}
			if len(stack) == 0 {
				return raw
			}
			stack = stack[:len(stack)-1]
			buf.WriteByte(byte(v))
		case string:
			sep()
			if err := str.Encode(v); err != nil {
				return raw
			}
			buf.Truncate(buf.Len() - 1) // Encode's newline
		case json.Number:
			sep()
			buf.WriteString(v.String())
		case bool:
			sep()
			buf.WriteString(strconv.FormatBool(v))
		case nil:
			sep()
			buf.WriteString("null")
		}
	}
	if len(stack) != 0 {
		return raw
	}
	return buf.Bytes()
}

// canonicalInputs puts the tool_use inputs of msgs (and of their nested
// blocks) in the canonical form, in place.
func canonicalInputs(msgs ...*llm.Message) {
	var walk func(bs []llm.Block)
	walk = func(bs []llm.Block) {
		for i := range bs {
			if bs[i].Type == llm.BlockToolUse {
				bs[i].Input = canonicalInput(bs[i].Input)
			}
			walk(bs[i].Content)
		}
	}
	for _, m := range msgs {
		if m != nil {
			walk(m.Content)
		}
	}
}

// UnmarshalJSON decodes a State and puts every tool input it holds back in
// the canonical form encoding/json's escaping changed.
func (s *State) UnmarshalJSON(data []byte) error {
	type plain State
	if err := json.Unmarshal(data, (*plain)(s)); err != nil {
		return err
	}
	for i := range s.History {
		canonicalInputs(&s.History[i])
	}
	if r := s.Run; r != nil {
		for i := range r.Input {
			canonicalInputs(&r.Input[i])
		}
		for i := range r.TurnInput {
			canonicalInputs(&r.TurnInput[i])
		}
		for i := range r.Calls {
			r.Calls[i].Input = canonicalInput(r.Calls[i].Input)
		}
		canonicalInputs(&r.Result.Message)
		if r.Response != nil {
			canonicalInputs(&r.Response.Message)
		}
		if r.Request != nil {
			for i := range r.Request.Messages {
				canonicalInputs(&r.Request.Messages[i])
			}
		}
	}
	return nil
}
