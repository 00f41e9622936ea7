package tui

import (
	"os"
	"regexp"
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// kind is what a transcript entry shows; it picks the entry's style.
type kind int

const (
	kUser      kind = iota // a prompt the user sent ("› text")
	kAssistant             // the model's text: rendered as markdown
	kTool                  // a tool call ("⏺ name input")
	kResult                // a tool result, indented under its call
	kDiff                  // a unified diff (fs_write), coloured by line
	kNotice                // a command's answer, a warning, an approval answer
	kAsk                   // an approval question and what the call will do
	kError                 // a failed prompt
)

// entry is one block of the transcript: its plain text and, cached, its
// lines rendered at width.
type entry struct {
	kind     kind
	text     string
	width    int
	rendered []string
}

// transcript is the chat's conversation as entries; lines renders them at a
// width (words wrapped whole, markdown through glamour).
type transcript struct {
	entries []*entry
	plain   bool // no colours or markdown styling (NO_COLOR, TERM=dumb)
	md      *glamour.TermRenderer
	mdWidth int
}

// plainTerminal reports whether the terminal asks for no styling: NO_COLOR
// set (https://no-color.org) or TERM=dumb.
func plainTerminal() bool {
	return os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb"
}

// add appends an entry of kind k.
func (t *transcript) add(k kind, text string) {
	t.entries = append(t.entries, &entry{kind: k, text: text})
}

// stream adds streamed model text to the last entry when it is the model's
// text, else starts a new one.
func (t *transcript) stream(s string) {
	if n := len(t.entries); n > 0 && t.entries[n-1].kind == kAssistant {
		e := t.entries[n-1]
		e.text += s
		e.rendered = nil
		return
	}
	t.add(kAssistant, s)
}

// clear drops every entry.
func (t *transcript) clear() { t.entries = nil }

// plainText is the transcript as text without styling, in the order shown.
func (t *transcript) plainText() string {
	var b strings.Builder
	for _, e := range t.entries {
		switch e.kind {
		case kUser:
			b.WriteString("\n› " + e.text + "\n")
		case kResult:
			b.WriteString(indent(e.text, "  ") + "\n")
		case kAssistant:
			b.WriteString(e.text)
			if !strings.HasSuffix(e.text, "\n") {
				b.WriteString("\n")
			}
		default:
			b.WriteString(e.text + "\n")
		}
	}
	return b.String()
}

// lines renders every entry at width columns; start[i] is the first line
// of entry i.
func (t *transcript) lines(width int) (out []string, start []int) {
	for i, e := range t.entries {
		if e.width != width || e.rendered == nil {
			e.rendered, e.width = t.render(e, width), width
		}
		if i > 0 && separated(e.kind) {
			out = append(out, "")
		}
		start = append(start, len(out))
		out = append(out, e.rendered...)
	}
	return out, start
}

// separated reports whether an entry of kind k starts after a blank line.
func separated(k kind) bool {
	return k == kUser || k == kAssistant || k == kTool || k == kAsk || k == kError
}

var (
	styleUser   = lipgloss.NewStyle().Bold(true)
	styleTool   = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
	styleResult = lipgloss.NewStyle().Foreground(lipgloss.Color("8"))
	styleNotice = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
	styleAsk    = lipgloss.NewStyle().Foreground(lipgloss.Color("5")).Bold(true)
	styleError  = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	styleAdd    = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	styleDel    = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	styleHunk   = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
)

// render lays out one entry in width columns.
func (t *transcript) render(e *entry, width int) []string {
	width = max(width, 10)
	style := func(s lipgloss.Style, lines []string) []string {
		if t.plain {
			return lines
		}
		for i, l := range lines {
			lines[i] = s.Render(l)
		}
		return lines
	}
	switch e.kind {
	case kUser:
		return style(styleUser, hang(e.text, "› ", "  ", width))
	case kAssistant:
		return t.markdown(e.text, width)
	case kTool:
		return style(styleTool, hang(e.text, "", "  ", width))
	case kResult:
		return style(styleResult, hang(e.text, "  ⎿ ", "    ", width))
	case kDiff:
		return t.diffLines(e.text, width)
	case kAsk:
		return style(styleAsk, hang(e.text, "", "  ", width))
	case kError:
		return style(styleError, hang(e.text, "", "", width))
	}
	return style(styleNotice, hang(e.text, "", "", width))
}

// diffLines colours a unified diff: added lines green, removed red, hunk
// headers cyan; long lines wrap with an indent.
func (t *transcript) diffLines(d string, width int) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
		s := lipgloss.NewStyle()
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			s = styleUser
		case strings.HasPrefix(l, "+"):
			s = styleAdd
		case strings.HasPrefix(l, "-"):
			s = styleDel
		case strings.HasPrefix(l, "@@"):
			s = styleHunk
		}
		for _, w := range hang(l, "  ", "  ", width) {
			if !t.plain {
				w = s.Render(w)
			}
			out = append(out, w)
		}
	}
	return out
}

// markdown renders the model's text with glamour (docs/cli.md, "chat"):
// headings, lists, emphasis and code blocks with syntax colours; in plain
// mode glamour's no-TTY style (text only). Lines glamour leaves wider than
// width (long code lines, URLs) are broken at width. When glamour fails
// the text is shown wrapped as it came.
func (t *transcript) markdown(text string, width int) []string {
	if t.md == nil || t.mdWidth != width {
		cfg := styles.DarkStyleConfig
		if t.plain {
			cfg = styles.NoTTYStyleConfig
		}
		zero := uint(0)
		cfg.Document.Margin = &zero
		cfg.Document.BlockPrefix, cfg.Document.BlockSuffix = "", ""
		r, err := glamour.NewTermRenderer(glamour.WithStyles(cfg), glamour.WithWordWrap(width), glamour.WithPreservedNewLines())
		if err != nil {
			return hang(text, "", "", width)
		}
		t.md, t.mdWidth = r, width
	}
	out, err := t.md.Render(text)
	if err != nil {
		return hang(text, "", "", width)
	}
	lines := strings.Split(out, "\n")
	var kept []string
	for _, l := range lines {
		l = trimStyledSpace(l)
		if ansi.StringWidth(l) > width {
			kept = append(kept, strings.Split(ansi.Wrap(l, width, ""), "\n")...)
			continue
		}
		kept = append(kept, l)
	}
	for len(kept) > 0 && strings.TrimSpace(ansi.Strip(kept[0])) == "" {
		kept = kept[1:]
	}
	for len(kept) > 0 && strings.TrimSpace(ansi.Strip(kept[len(kept)-1])) == "" {
		kept = kept[:len(kept)-1]
	}
	return kept
}

// trailingSpace is the run of spaces (styled or not) at a line's end:
// glamour pads every line to the wrap width with styled spaces.
var trailingSpace = regexp.MustCompile(`(?:\x1b\[[0-9;]*m| )+$`)

// trimStyledSpace drops a line's trailing spaces and the styles around
// them, ending a styled line with a reset.
func trimStyledSpace(l string) string {
	l = trailingSpace.ReplaceAllString(l, "")
	if strings.Contains(l, "\x1b[") {
		l += "\x1b[m"
	}
	return l
}

// hang wraps text at width columns on word boundaries (a word longer than
// the line is broken), the first line prefixed with first and the rest
// with rest. Every line of text is wrapped on its own.
func hang(text, first, rest string, width int) []string {
	var out []string
	pad := max(ansi.StringWidth(first), ansi.StringWidth(rest))
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		// a continuation lines up under the line's own indentation (a
		// list, a table of commands), when that leaves room for words
		lead := line[:len(line)-len(strings.TrimLeft(line, " "))]
		if len(lead) > width/2 {
			lead = ""
		}
		room := max(width-pad-len(lead), 4)
		for j, l := range strings.Split(wrapWords(strings.TrimLeft(line, " "), room), "\n") {
			p := rest
			if i == 0 && j == 0 {
				p = first
			}
			out = append(out, p+lead+l)
		}
	}
	return out
}

// wrapWords wraps s at width columns between words, breaking only a word
// longer than width (ansi.Wrap), and drops the spaces at the breaks. A
// hyphen is part of its word (ansi.Wrap would break "missing-notes.md"
// after the hyphen): it is swapped for a non-breaking hyphen while
// wrapping.
func wrapWords(s string, width int) string {
	if ansi.StringWidth(s) <= width {
		return s
	}
	const nbHyphen = "\u2011"
	lines := strings.Split(ansi.Wrap(strings.ReplaceAll(s, "-", nbHyphen), width, ""), "\n")
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(strings.TrimRight(l, " "), nbHyphen, "-")
	}
	return strings.Join(lines, "\n")
}

// indent prefixes every line of s with p.
func indent(s, p string) string {
	return p + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+p)
}
