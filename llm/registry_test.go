package llm

import (
	"errors"
	"strings"
	"testing"
)

type namedProvider struct{ Provider }

// NewClient builds through the constructor registered for the API and
// names llm/all when none is linked.
func TestNewClientUsesTheRegisteredConstructor(t *testing.T) {
	var got ClientConfig
	RegisterClient("test-wire", func(c ClientConfig) (Provider, error) { got = c; return namedProvider{}, nil })
	if _, err := NewClient("test-wire", ClientConfig{Name: "x", APIKey: "k"}); err != nil || got.Name != "x" || got.APIKey != "k" {
		t.Fatalf("NewClient: %v, constructor saw %+v", err, got)
	}
	_, err := NewClient("no-such-wire", ClientConfig{})
	if !errors.Is(err, ErrNotLinked) || !strings.Contains(err.Error(), "llm/all") {
		t.Errorf("unlinked API: %v; want ErrNotLinked naming llm/all", err)
	}
}
