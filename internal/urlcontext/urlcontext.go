// Package urlcontext builds the tiered layout's URL context (docs/tiered.md,
// rule 4): a fetched URL as a context entry with its symbol map, and the
// URLs the conversation's user messages mention, fetched once per session.
package urlcontext

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/strata-agent/strata/internal/symbols"
	"github.com/strata-agent/strata/internal/urlfetch"
	"github.com/strata-agent/strata/llm"
	"github.com/strata-agent/strata/prompt"
)

// MaxPromptURLs is the most URLs a session fetches from the conversation
// (docs/tiered.md, rule 4: "content was fetched from URLs mentioned in the
// conversation"); later ones are left out with a note in the error.
const MaxPromptURLs = 8

// urlRE finds http(s) URLs in prompt text; trailing punctuation is trimmed
// (Mentions).
var urlRE = regexp.MustCompile(`https?://[^\s<>"'` + "`" + `\)\]\}]+`)

// Doc fetches raw with f and returns it as a URL context entry, with
// the symbol map of its content when its path names a source file of a
// language internal/symbols parses (docs/tiered.md, rule 4: "title +
// content + optional symbol map").
func Doc(ctx context.Context, f *urlfetch.Fetcher, raw string) (prompt.URLDoc, error) {
	d, err := f.Fetch(ctx, raw)
	if err != nil {
		return prompt.URLDoc{}, err
	}
	doc := prompt.URLDoc{URL: d.URL, Title: d.Title, Content: d.Content}
	if u, err := url.Parse(d.URL); err == nil && symbols.Language(u.Path) != "" {
		if sf, err := symbols.Parse(u.Path, []byte(d.Content)); err == nil && len(sf.Symbols) > 0 {
			sf.Path = d.URL
			doc.Symbols = symbols.Block(sf, nil)
		}
	}
	return doc, nil
}

// Mentions fetches the URLs the user's messages mention (text blocks of
// user messages; tool results are not the user's words), once per session,
// in order of first mention, at most MaxPromptURLs. Safe for concurrent
// use.
type Mentions struct {
	fetcher *urlfetch.Fetcher
	given   map[string]bool // --url URLs, already in the context
	mu      sync.Mutex
	docs    map[string]*prompt.URLDoc // nil doc = failed (reported once)
	order   []string
	capped  bool
}

// NewMentions returns the mentioned-URL fetcher of one session, fetching
// with f.
func NewMentions(f *urlfetch.Fetcher) *Mentions {
	return &Mentions{fetcher: f, given: map[string]bool{}, docs: map[string]*prompt.URLDoc{}}
}

// Given records a URL the person gave (--url): it is already in the
// context and is not fetched again when a message mentions it.
func (p *Mentions) Given(u string) {
	p.mu.Lock()
	p.given[u] = true
	p.mu.Unlock()
}

// Gather returns the docs of the URLs history mentions, and the errors of
// URLs fetched now that failed (each reported once).
func (p *Mentions) Gather(ctx context.Context, history []llm.Message) ([]prompt.URLDoc, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []string
	for _, m := range history {
		if m.Role != llm.RoleUser {
			continue
		}
		for _, b := range m.Content {
			if b.Type != llm.BlockText {
				continue
			}
			for _, raw := range urlRE.FindAllString(b.Text, -1) {
				raw = strings.TrimRight(raw, ".,;:!?")
				if _, seen := p.docs[raw]; seen || p.given[raw] {
					continue
				}
				if len(p.order) >= MaxPromptURLs {
					if !p.capped {
						p.capped = true
						errs = append(errs, fmt.Sprintf("more than %d URLs mentioned: %s and later ones are not fetched", MaxPromptURLs, raw))
					}
					continue
				}
				p.order = append(p.order, raw)
				d, err := Doc(ctx, p.fetcher, raw)
				if err != nil {
					p.docs[raw] = nil
					errs = append(errs, err.Error())
					continue
				}
				p.docs[raw] = &d
			}
		}
	}
	var out []prompt.URLDoc
	for _, u := range p.order {
		if d := p.docs[u]; d != nil {
			out = append(out, *d)
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("URL context: %s", strings.Join(errs, "; "))
	}
	return out, nil
}
