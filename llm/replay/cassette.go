package replay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Interaction is one recorded request/response pair of an HTTP cassette.
type Interaction struct {
	Request  Request  // Path holds the full recorded URL
	Response Response // ready to serve
}

// Cassette loads an HTTP cassette in one of the three shapes found in real SDK
// test suites:
//
//   - vcrpy YAML (pydantic-ai): interactions[].request{method, uri, headers,
//     body | parsed_body} and response{status{code}, headers, body{string} |
//     parsed_body};
//   - go-vcr YAML (anthropic-sdk-go): interactions[].request{method, url,
//     headers, body} and response{code, headers, body};
//   - inline-snapshot JSON (anthropic-sdk-python): an array of
//     {request{method, url, headers, body}, response{status_code, headers, body}}.
//
// Bodies that were stored parsed are re-encoded as JSON (key order is not
// preserved; compare them as JSON values).
func Cassette(path string) ([]Interaction, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	var out []Interaction
	if strings.HasSuffix(path, ".json") {
		out, err = inlineSnapshot(raw)
	} else {
		out, err = vcrYAML(raw)
	}
	if err != nil {
		return nil, fmt.Errorf("replay: cassette %s: %w", path, err)
	}
	for i := range out {
		out[i].Response.Source = fmt.Sprintf("%s#%d", path, i)
	}
	return out, nil
}

func inlineSnapshot(raw []byte) ([]Interaction, error) {
	var doc []struct {
		Request struct {
			Method  string            `json:"method"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
			Body    json.RawMessage   `json:"body"`
		} `json:"request"`
		Response struct {
			StatusCode int               `json:"status_code"`
			Headers    map[string]string `json:"headers"`
			Body       json.RawMessage   `json:"body"`
		} `json:"response"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	out := make([]Interaction, 0, len(doc))
	for _, d := range doc {
		in := Interaction{
			Request:  Request{Method: d.Request.Method, Path: d.Request.URL, Header: http.Header{}, Body: jsonBody(d.Request.Body)},
			Response: Response{Status: d.Response.StatusCode, Header: http.Header{}, Body: jsonBody(d.Response.Body)},
		}
		for k, v := range d.Request.Headers {
			in.Request.Header.Set(k, v)
		}
		for k, v := range d.Response.Headers {
			in.Response.Header.Set(k, v)
		}
		out = append(out, in)
	}
	return out, nil
}

// jsonBody returns a JSON string's contents raw, and any other JSON value as is.
func jsonBody(b json.RawMessage) []byte {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		return []byte(s)
	}
	if string(b) == "null" {
		return nil
	}
	return b
}

type vcrDoc struct {
	Interactions []struct {
		Request struct {
			Method     string              `yaml:"method"`
			URI        string              `yaml:"uri"`
			URL        string              `yaml:"url"`
			Headers    map[string][]string `yaml:"headers"`
			Body       any                 `yaml:"body"`
			ParsedBody any                 `yaml:"parsed_body"`
		} `yaml:"request"`
		Response struct {
			Status     any                 `yaml:"status"` // vcrpy {code, message}; go-vcr "200 OK"
			Code       int                 `yaml:"code"`
			Headers    map[string][]string `yaml:"headers"`
			Body       any                 `yaml:"body"`
			ParsedBody any                 `yaml:"parsed_body"`
		} `yaml:"response"`
	} `yaml:"interactions"`
}

func vcrYAML(raw []byte) ([]Interaction, error) {
	var doc vcrDoc
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	out := make([]Interaction, 0, len(doc.Interactions))
	for i, it := range doc.Interactions {
		reqBody, err := yamlBody(it.Request.Body, it.Request.ParsedBody)
		if err != nil {
			return nil, fmt.Errorf("interaction %d request body: %w", i, err)
		}
		respBody, err := yamlBody(it.Response.Body, it.Response.ParsedBody)
		if err != nil {
			return nil, fmt.Errorf("interaction %d response body: %w", i, err)
		}
		url := it.Request.URI
		if url == "" {
			url = it.Request.URL
		}
		status := 0
		if m, ok := it.Response.Status.(map[string]any); ok {
			status, _ = m["code"].(int)
		}
		if status == 0 {
			status = it.Response.Code
		}
		in := Interaction{
			Request:  Request{Method: it.Request.Method, Path: url, Header: http.Header{}, Body: reqBody},
			Response: Response{Status: status, Header: http.Header{}, Body: respBody},
		}
		for k, vs := range it.Request.Headers {
			for _, v := range vs {
				in.Request.Header.Add(k, v)
			}
		}
		for k, vs := range it.Response.Headers {
			for _, v := range vs {
				in.Response.Header.Add(k, v)
			}
		}
		out = append(out, in)
	}
	return out, nil
}

// yamlBody turns a vcr body (a string, a {string: …} map, or a parsed YAML
// value) into bytes.
func yamlBody(body, parsed any) ([]byte, error) {
	if parsed != nil {
		return json.Marshal(normalizeYAML(parsed))
	}
	switch b := body.(type) {
	case nil:
		return nil, nil
	case string:
		return []byte(b), nil
	case []byte:
		return b, nil
	case map[string]any:
		if s, ok := b["string"]; ok {
			switch v := s.(type) {
			case string:
				return []byte(v), nil
			case []byte:
				return v, nil
			case nil:
				return nil, nil
			}
			return nil, fmt.Errorf("body.string has type %T", s)
		}
	}
	return nil, fmt.Errorf("unsupported body shape %T", body)
}

// normalizeYAML converts YAML-decoded maps with non-string keys into
// JSON-encodable values.
func normalizeYAML(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normalizeYAML(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = normalizeYAML(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = normalizeYAML(x)
		}
		return t
	case int:
		return t
	case string:
		return t
	}
	return v
}
