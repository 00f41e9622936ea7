package panels

import (
	"fmt"
	"strings"
	"time"

	"github.com/strata-agent/strata/llm"
)

// Footer texts of Context Pilot's template (src/constants prompts:
// PANEL_FOOTER, PANEL_FOOTER_MSG_HEADER, PANEL_FOOTER_MSG_LINE): the
// footer is FooterPrefix, the message timestamps section, then
// "\nCurrent datetime: " and the request time.
const (
	FooterMsgHeader = "Last message datetimes:"
	// FooterMsgLines is how many of the latest messages the footer dates.
	FooterMsgLines = 25
)

// ISO formats Unix ms as Context Pilot does: "2006-01-02T15:04:05Z" (UTC).
func ISO(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05Z") }

func hhmm(ms int64) string { return time.UnixMilli(ms).UTC().Format("15:04") }

// knownTime is Context Pilot's rule for panel timestamps: times before
// 2020-01-01 are unknown.
func knownTime(ms int64) bool { return ms >= 1577836800000 }

// timestamp returns the panel timestamp line (docs/panels.md, rule 10).
func timestamp(ms int64) string {
	if !knownTime(ms) {
		return TimestampNone
	}
	return TimestampPrefix + ISO(ms)
}

// MessageTime is one line of the footer's message timestamps: the
// message's number in the whole conversation (1-based, detached messages
// counted), its role and when it was first sent (Unix ms).
type MessageTime struct {
	N    int
	Role llm.Role
	At   int64
}

// Footer returns the footer text for a request made at now (Unix ms):
// Context Pilot's template with the "Last message datetimes:" section
// listing the last FooterMsgLines messages with a known time, each as
// "  - [N] ROLE: ISO (DELTA)", and the current datetime.
func Footer(msgs []MessageTime, now int64) string {
	var known []MessageTime
	for _, m := range msgs {
		if knownTime(m.At) {
			known = append(known, m)
		}
	}
	if len(known) > FooterMsgLines {
		known = known[len(known)-FooterMsgLines:]
	}
	var b strings.Builder
	b.WriteString(FooterPrefix)
	if len(known) > 0 {
		b.WriteString(FooterMsgHeader + "\n")
		for _, m := range known {
			fmt.Fprintf(&b, "  - [%d] %s: %s (%s)\n", m.N, m.Role, ISO(m.At), delta(now, m.At))
		}
	}
	b.WriteString("\nCurrent datetime: " + ISO(now))
	return b.String()
}

// delta is Context Pilot's human time delta: "N seconds ago" under a
// minute, "1 minute ago" / "N minutes ago" under an hour, else "1 hour
// ago" / "N hours ago"; "just now" when at is not before now.
func delta(now, at int64) string {
	if now <= at {
		return "just now"
	}
	s := (now - at) / 1000
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit + " ago"
		}
		return fmt.Sprintf("%d %ss ago", n, unit)
	}
	switch {
	case s < 60:
		return fmt.Sprintf("%d seconds ago", s)
	case s < 3600:
		return plural(s/60, "minute")
	default:
		return plural(s/3600, "hour")
	}
}
