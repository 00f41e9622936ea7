// Package jsonpos turns the byte offsets of encoding/json errors into the
// 1-based line and column a person (or an editor) looks for, counted as
// Python's json module counts them: the column is the character (Unicode
// code point) index of the offending character within its line, plus one.
package jsonpos

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Position is a 1-based line and column in a JSON document. Column counts
// characters (code points), not bytes, as Python's json.JSONDecodeError does.
type Position struct {
	Line, Column int
}

// String renders the position as "LINE:COLUMN".
func (p Position) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }

// Of returns the position err (from json.Unmarshal or a json.Decoder over
// data) refers to, and false when err carries no offset (not a
// *json.SyntaxError or *json.UnmarshalTypeError, or an offset outside data).
//
// encoding/json reports the offset after the byte it failed on, so a syntax
// error points at the byte before the offset (the unexpected character);
// "unexpected end of JSON input" points just past the last byte, as Python
// does ("Expecting value: line 1 column 8 (char 7)" for `{"a": 1`). A type
// error points at the last byte of the value that did not fit.
func Of(data []byte, err error) (Position, bool) {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
		if off > 0 && !(off == int64(len(data)) && se.Error() == "unexpected end of JSON input") {
			off-- // the offending byte
		}
	case errors.As(err, &te):
		off = te.Offset
		if off > 0 {
			off--
		}
	default:
		return Position{}, false
	}
	if off < 0 || off > int64(len(data)) {
		return Position{}, false
	}
	return At(data, int(off)), true
}

// At returns the position of byte offset off in data (0 ≤ off ≤ len(data)).
func At(data []byte, off int) Position {
	p := Position{Line: 1, Column: 1}
	for _, c := range string(data[:off]) {
		if c == '\n' {
			p.Line++
			p.Column = 1
		} else {
			p.Column++
		}
	}
	return p
}

// Wrap adds "line L, column C" to err when Of finds its position, and
// returns err unchanged otherwise; errors.Is/As still reach err.
func Wrap(data []byte, err error) error {
	if p, ok := Of(data, err); ok {
		return fmt.Errorf("line %d, column %d: %w", p.Line, p.Column, err)
	}
	return err
}
