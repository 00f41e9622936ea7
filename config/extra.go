package config

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// Helpers that keep fields a struct does not know, so that decoding and
// re-encoding a configuration file loses nothing (round-trip safety).

var knownKeysCache sync.Map // reflect.Type -> map[string]bool

// knownKeys returns the JSON names of t's exported fields (json:"-" excluded).
func knownKeys(t reflect.Type) map[string]bool {
	if v, ok := knownKeysCache.Load(t); ok {
		return v.(map[string]bool)
	}
	keys := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		keys[name] = true
	}
	knownKeysCache.Store(t, keys)
	return keys
}

// extraFields returns the members of the JSON object b whose names are not
// JSON fields of t, or nil when there are none (or b is not an object).
func extraFields(b []byte, t reflect.Type) map[string]json.RawMessage {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil
	}
	known := knownKeys(t)
	var extra map[string]json.RawMessage
	for k, v := range all {
		if known[k] {
			continue
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[k] = v
	}
	return extra
}

// withExtra encodes v (a struct without custom MarshalJSON) and adds the extra
// members that v does not already encode. Keys come out sorted.
func withExtra(v any, extra map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, raw := range extra {
		if _, ok := m[k]; !ok {
			m[k] = raw
		}
	}
	return json.Marshal(m)
}

// isJSONNull reports whether b is the JSON literal null.
func isJSONNull(b []byte) bool {
	return bytes.Equal(bytes.TrimSpace(b), []byte("null"))
}
