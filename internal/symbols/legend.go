package symbols

import (
	"path"
	"sort"
	"strconv"
	"strings"
)

// Abbreviations is the abbreviation key of the legend: every Kind letter
// and the line-number suffix.
const Abbreviations = "Abbreviations: c=class/struct i=interface/trait e=enum t=type f=function " +
	"m=method/constructor v=variable/constant/field n=module/namespace :N=line number; " +
	"members are indented under their class."

// MaxAliases is the most path aliases a legend defines (@1/ … @9/).
const MaxAliases = 9

// Aliases maps frequent directories to short aliases "@1/" … "@9/". The
// zero value (or nil) defines none. Safe for concurrent reads.
type Aliases struct {
	dirs []string // dirs[i] is aliased "@{i+1}/"; each ends with "/"
}

// NewAliases chooses aliases for the directories of paths: a directory
// qualifies when at least 3 files sit directly in it and its path is at
// least 8 bytes; the MaxAliases that save the most bytes (length − 3, times
// files) win, and are numbered in path order. The same paths always give
// the same aliases.
func NewAliases(paths []string) *Aliases {
	count := map[string]int{}
	for _, p := range paths {
		if d := path.Dir(p); d != "." {
			count[d+"/"]++
		}
	}
	var cands []string
	for d, n := range count {
		if n >= 3 && len(d) >= 8 {
			cands = append(cands, d)
		}
	}
	gain := func(d string) int { return (len(d) - 3) * count[d] }
	sort.Slice(cands, func(i, j int) bool {
		if gi, gj := gain(cands[i]), gain(cands[j]); gi != gj {
			return gi > gj
		}
		return cands[i] < cands[j]
	})
	if len(cands) > MaxAliases {
		cands = cands[:MaxAliases]
	}
	sort.Strings(cands)
	return &Aliases{dirs: cands}
}

// Shorten replaces the directory of p by its alias when it has one.
func (a *Aliases) Shorten(p string) string {
	if a == nil {
		return p
	}
	d := path.Dir(p) + "/"
	for i, dir := range a.dirs {
		if d == dir {
			return "@" + strconv.Itoa(i+1) + "/" + p[len(dir):]
		}
	}
	return p
}

// Legend returns the legend text: the abbreviation key, then one line per
// path alias ("@1/=src/components/").
func (a *Aliases) Legend() string {
	var b strings.Builder
	b.WriteString(Abbreviations + "\n")
	if a != nil && len(a.dirs) > 0 {
		b.WriteString("Path aliases:\n")
		for i, d := range a.dirs {
			b.WriteString("@" + strconv.Itoa(i+1) + "/=" + d + "\n")
		}
	}
	return b.String()
}
