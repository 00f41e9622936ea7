package workflow

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// jsonschema-go's errors name the schema path that failed, not the
// instance's: locate finds the field by validating the parts of the
// definition one by one against the schema's $defs.

var (
	entrySchema  = subschema("entry")
	memberSchema = subschema("member")
	lastProperty = regexp.MustCompile(`/properties/([A-Za-z]+)`)
	lastMessage  = regexp.MustCompile(`validating [^:]*: ([^:]+(: [^:]*)?)$`)
	ratio        = regexp.MustCompile(`\b(-?\d+)/1\b`)   // jsonschema-go prints integers as rationals
	zeros        = regexp.MustCompile(`\b(-?\d+)\.0+\b`) // and bounds as floats
	rootKeys     = []string{"name", "description", "inputs", "stages"}
	stageKeys    = []string{"name", "description", "body", "prompt", "allowedTools", "turnCap", "completion", "check", "assert", "retries", "grants", "next"}
	groupKeys    = []string{"name", "description", "parallel", "join", "next"}
)

// subschema resolves {"$ref": "#/$defs/<def>"} with the schema's $defs.
func subschema(def string) *jsonschema.Resolved {
	var root map[string]any
	if err := json.Unmarshal(SchemaJSON, &root); err != nil {
		panic("workflow/schema.json: " + err.Error())
	}
	b, _ := json.Marshal(map[string]any{"$schema": root["$schema"], "$ref": "#/$defs/" + def, "$defs": root["$defs"]})
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		panic("workflow/schema.json: " + err.Error())
	}
	r, err := s.Resolve(nil)
	if err != nil {
		panic("workflow/schema.json: " + err.Error())
	}
	return r
}

// locate returns the field (a JSON pointer) err is about and a message.
func locate(inst any, err error) (string, string) {
	obj, _ := inst.(map[string]any)
	if obj == nil {
		return "", "a workflow is a mapping with name and stages"
	}
	if k := unknownKey(obj, rootKeys); k != "" {
		return "/" + k, fmt.Sprintf("unknown field %q (known: %s)", k, strings.Join(rootKeys, ", "))
	}
	stages, _ := obj["stages"].([]any)
	for i, st := range stages {
		if entrySchema.Validate(st) == nil {
			continue
		}
		field := fmt.Sprintf("/stages/%d", i)
		m, _ := st.(map[string]any)
		if m == nil {
			return field, "a stage is a mapping with name and body (or name and parallel)"
		}
		if _, group := m["parallel"]; group {
			if k := unknownKey(m, groupKeys); k != "" {
				return field + "/" + k, fmt.Sprintf("unknown field %q of a parallel group (known: %s)", k, strings.Join(groupKeys, ", "))
			}
			members, _ := m["parallel"].([]any)
			for j, mem := range members {
				if f, msg, bad := member(mem, fmt.Sprintf("%s/parallel/%d", field, j)); bad {
					return f, msg
				}
			}
			if j, ok := m["join"]; ok {
				if f, msg, bad := member(j, field+"/join"); bad {
					return f, msg
				}
			}
			return refine(field, entrySchema.Validate(st))
		}
		if k := unknownKey(m, stageKeys); k != "" {
			return field + "/" + k, fmt.Sprintf("unknown field %q of a stage (known: %s)", k, strings.Join(stageKeys, ", "))
		}
		return refine(field, entrySchema.Validate(st))
	}
	return refine("", err)
}

// member locates an error in a group's sibling or join.
func member(v any, field string) (string, string, bool) {
	err := memberSchema.Validate(v)
	if err == nil {
		return "", "", false
	}
	if m, ok := v.(map[string]any); ok {
		if k := unknownKey(m, stageKeys); k != "" {
			return field + "/" + k, fmt.Sprintf("unknown field %q of a stage (known: %s)", k, strings.Join(stageKeys, ", ")), true
		}
	}
	f, msg := refine(field, err)
	return f, msg, true
}

// refine appends the last property the schema path names to field and
// keeps the validator's last message.
func refine(field string, err error) (string, string) {
	msg := err.Error()
	if m := lastProperty.FindAllStringSubmatch(msg, -1); m != nil {
		field += "/" + m[len(m)-1][1]
	}
	if m := lastMessage.FindStringSubmatch(msg); m != nil {
		msg = m[1]
	}
	return field, zeros.ReplaceAllString(ratio.ReplaceAllString(msg, "$1"), "$1")
}

// unknownKey returns a key of m not in known ("" when none), the first
// in sorted order.
func unknownKey(m map[string]any, known []string) string {
	var keys []string
	for k := range m {
		if !slices.Contains(known, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}
