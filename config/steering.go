package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Steering inclusion modes (kiro steering docs; ../shared/data/steering/INDEX.md).
const (
	// InclusionAlways includes the file in every request (the default).
	InclusionAlways = "always"
	// InclusionFileMatch includes it when a file in play matches
	// fileMatchPattern.
	InclusionFileMatch = "fileMatch"
	// InclusionManual includes it only when referenced as "#name".
	InclusionManual = "manual"
)

// Steering is a kiro steering file: Markdown with optional YAML front matter
// (inclusion, fileMatchPattern). Files without front matter are always
// included.
type Steering struct {
	// Name is the file name without ".md": what "#name" references.
	Name string
	// Path is the path the file was loaded from, as given.
	Path string
	// AbsPath is its absolute path.
	AbsPath string
	// Inclusion is "always" (default), "fileMatch", "manual", or another
	// value as written (treated as manual: never included automatically).
	Inclusion string
	// FileMatchPatterns are the fileMatch globs: fileMatchPattern given as a
	// string, a comma-separated string, or a YAML list.
	FileMatchPatterns []string
	// Meta is the whole front matter.
	Meta map[string]any
	// Body is the Markdown after the front matter: what goes in requests.
	Body string
}

// Always reports whether the file is included in every request.
func (s *Steering) Always() bool { return s.Inclusion == InclusionAlways }

// LoadSteering reads a steering file. Front matter is optional; when present
// it must be valid YAML, else the error names the file. fileMatch without
// any pattern is an error too (the file could never be included).
func LoadSteering(path string) (*Steering, error) { return LoadSteeringWith(path, os.ReadFile) }

// LoadSteeringWith is LoadSteering reading the file with read (a sandboxed
// reader such as agentfile.ContextReader; errors are read's, wrapped).
func LoadSteeringWith(path string, read func(string) ([]byte, error)) (*Steering, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("steering %s: %w", path, err)
	}
	raw, err := read(abs)
	if err != nil {
		return nil, fmt.Errorf("steering: %w", err)
	}
	s := &Steering{
		Name:      strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs)),
		Path:      path,
		AbsPath:   abs,
		Inclusion: InclusionAlways,
		Meta:      map[string]any{},
	}
	fm, body, ok := splitFrontMatter(raw)
	s.Body = body
	if !ok {
		return s, nil
	}
	if s.Meta, err = parseFrontMatter(fm); err != nil {
		return nil, fmt.Errorf("steering %s: front matter: %w", abs, err)
	}
	if inc := strings.TrimSpace(stringOf(s.Meta["inclusion"])); inc != "" {
		s.Inclusion = inc
	}
	switch v := s.Meta["fileMatchPattern"].(type) {
	case string:
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				s.FileMatchPatterns = append(s.FileMatchPatterns, p)
			}
		}
	case []any:
		for _, e := range v {
			if p := strings.TrimSpace(stringOf(e)); p != "" {
				s.FileMatchPatterns = append(s.FileMatchPatterns, p)
			}
		}
	}
	if s.Inclusion == InclusionFileMatch && len(s.FileMatchPatterns) == 0 {
		return nil, fmt.Errorf("steering %s: inclusion fileMatch without fileMatchPattern", abs)
	}
	return s, nil
}

// Matches reports whether the steering file applies to a file path: always
// for "always", never for "manual" (or unknown modes), and for "fileMatch"
// when a pattern matches the path (slash-separated, relative to the project
// root, doublestar "**" globs); a pattern without "/" also matches the base
// name, so "*.ts" covers "src/a.ts".
func (s *Steering) Matches(path string) bool {
	switch s.Inclusion {
	case InclusionAlways:
		return true
	case InclusionFileMatch:
	default:
		return false
	}
	p := strings.TrimPrefix(filepath.ToSlash(path), "./")
	for _, pat := range s.FileMatchPatterns {
		pat = strings.TrimPrefix(pat, "./")
		if ok, _ := doublestar.Match(pat, p); ok {
			return true
		}
		if !strings.Contains(pat, "/") {
			if ok, _ := doublestar.Match(pat, filepath.Base(p)); ok {
				return true
			}
		}
	}
	return false
}
