package trajectory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/strata-agent/strata/internal/jsonpos"
)

// ErrMalformed is matched (errors.Is) by every error Parse and Load return
// for a file that was read but is not a valid trajectory: not JSON, the
// wrong trajectory_format, a missing or ill-typed field. A caller going
// through many files (strata bench) may skip such a file and go on.
var ErrMalformed = errors.New("malformed trajectory")

// MalformedError is a file that is not a valid trajectory. Error renders it
// as "trajectory: FILE:LINE:COL: WHERE: DETAIL" (LINE:COL and WHERE only
// when known), the position 1-based with columns counted in characters as
// Python's json module counts them.
type MalformedError struct {
	// File is the name given to Parse (the path for Load).
	File string
	// Line and Column locate the error in the file (1-based); 0 when unknown.
	// For a field error they point at the start of the message concerned.
	Line, Column int
	// Where is the JSON path of the field concerned, e.g.
	// "messages[4].extra.response.usage"; "" for a syntax error.
	Where string
	// Err is the underlying error (a *json.SyntaxError, or a description).
	Err error
}

// Error implements error.
func (e *MalformedError) Error() string {
	s := "trajectory: " + e.File
	if e.Line > 0 {
		s += fmt.Sprintf(":%d:%d", e.Line, e.Column)
	}
	if e.Where != "" {
		s += ": " + e.Where
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *MalformedError) Unwrap() error { return e.Err }

// Is reports ErrMalformed.
func (e *MalformedError) Is(target error) bool { return target == ErrMalformed }

// syntaxError is the MalformedError of err, from json.Unmarshal of data, or
// of a decode of a sub-document starting at byte base of data.
func syntaxError(name string, data []byte, base int, sub []byte, err error) *MalformedError {
	e := &MalformedError{File: name, Err: err}
	if p, ok := jsonpos.Of(sub, err); ok {
		if base > 0 {
			start := jsonpos.At(data, base)
			if p.Line == 1 {
				p.Column += start.Column - 1
			}
			p.Line += start.Line - 1
		}
		e.Line, e.Column = p.Line, p.Column
	}
	return e
}

// messageOffsets returns the byte offset in data of each element of the
// top-level "messages" array, or nil when data cannot be walked (Parse has
// already checked that it is valid JSON, so this is best-effort).
func messageOffsets(data []byte) []int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key != "messages" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil
		}
		var offs []int
		for dec.More() {
			off := int(dec.InputOffset())
			for off < len(data) && bytes.IndexByte([]byte(" \t\r\n,"), data[off]) >= 0 {
				off++
			}
			offs = append(offs, off)
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
		}
		return offs
	}
	return nil
}

// messageIndex returns k for a JSON path starting "messages[k]".
func messageIndex(where string) (int, bool) {
	var k int
	if _, err := fmt.Sscanf(where, "messages[%d]", &k); err != nil {
		return 0, false
	}
	return k, true
}
