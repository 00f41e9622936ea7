// Package knowledge indexes an agent's knowledge bases (kiro `resources`
// entries {"type":"knowledgeBase", "source":"file://…", …}) in a real
// full-text index — SQLite FTS5 through modernc.org/sqlite, ranked by BM25 —
// and serves them to the model two ways, as kiro-cli does (kiro-cli turn
// anatomy, "Layer 2: Knowledge Base Listing — Indexed knowledge contexts for
// RAG"): Listing, the layer-2 text naming every indexed context, and Tool,
// kiro's `knowledge` tool (commands show and search).
//
// kiro offers two index types (Amazon Q knowledge-management.md): Fast, a
// lexical BM25 index, and Best, a semantic index with the all-MiniLM-L6-v2
// embedding model. strata has no embedding model, so every base gets the
// lexical index; a base asking for "best" is indexed the same way and Build
// warns about it.
//
// An Index lives in memory and is rebuilt each time an agent is loaded;
// nothing is written to disk. It is safe for concurrent use.
package knowledge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/strata-agent/strata/tool"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, with FTS5 compiled in
)

// Limits of indexing, per file and per base.
const (
	// MaxFileBytes is the largest file indexed, in bytes; larger files are
	// skipped and counted in Context.Skipped.
	MaxFileBytes = 1 << 20
	// MaxFiles is the most files indexed per base; the walk stops there
	// and Build warns.
	MaxFiles = 10000
	// ChunkLines is the most lines in one indexed chunk (a search hit).
	ChunkLines = 40
	// DefaultTimeout bounds the indexing of all bases of one Build when
	// Options.Timeout is 0; what is indexed by then is kept and Build
	// warns.
	DefaultTimeout = 30 * time.Second
)

// Options are how Build reads the sources.
type Options struct {
	// Env is the sandbox every source and file passes (tool.ReadFileIn:
	// inside Env.Workdir or a read allowed path after symlinks, not in
	// Env.ReadPaths.DeniedPaths, not hard-linked, regular files only, the
	// size checked before reading). A nil Env is the process's working
	// directory with no other setting.
	Env *tool.Env
	// Timeout bounds the indexing (0 = DefaultTimeout).
	Timeout time.Duration
	// Progress, when set, receives a line every 1000 files and when a
	// base is done.
	Progress func(msg string)
}

// ErrUnknownContext is returned (wrapped) by Search and Show for a context
// id or name the index does not hold.
var ErrUnknownContext = errors.New("knowledge: unknown context")

// Base is one knowledge base to index: a kiro knowledgeBase resource with
// its source resolved to an absolute path.
type Base struct {
	Name        string   // kiro "name" ("" = the source's base name)
	Description string   // kiro "description"
	Source      string   // absolute path of the file or directory to index
	IndexType   string   // kiro "indexType": "fast", "best" or "" (fast)
	Include     []string // doublestar patterns relative to Source; "*.md" without "/" matches at any depth
	Exclude     []string // same form; a match is skipped even when included
}

// Context is one indexed knowledge base, as listed to the model.
type Context struct {
	ID          string // stable: the first 8 hex digits of sha256(name "\x00" source)
	Name        string
	Description string
	Source      string
	Files       int // files indexed
	Chunks      int // chunks (search units) indexed
	Skipped     int // files skipped: binary, too large, not regular, refused by the sandbox or unreadable
}

// Hit is one search result: a chunk of a file.
type Hit struct {
	ContextID, ContextName string
	Path                   string // relative to the context's source ("" = the source is the file)
	StartLine, EndLine     int    // 1-based, inclusive
	Text                   string // the chunk
	Score                  float64
}

// Index holds the indexed knowledge bases of one agent.
type Index struct {
	db       *sql.DB
	contexts []Context
}

// Build indexes bases into a new in-memory Index. A base whose source is
// missing or refused by the sandbox (o.Env), or that asks for the semantic
// index, gives a warning (the message names the base and what was done)
// and is indexed as well as it can be: such a source is listed with no
// files. Indexing stops at o.Timeout (what was indexed is kept, with a
// warning). Errors are only those of the database itself, or ctx's. The
// caller must Close the index.
func Build(ctx context.Context, bases []Base, o Options) (*Index, []string, error) {
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, nil, fmt.Errorf("knowledge: open index: %w", err)
	}
	db.SetMaxOpenConns(1) // one connection: each would get its own memory database
	if _, err := db.ExecContext(ctx, `CREATE VIRTUAL TABLE chunks USING fts5(context_id UNINDEXED, path UNINDEXED,
		start_line UNINDEXED, end_line UNINDEXED, body, tokenize='porter unicode61')`); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("knowledge: create FTS5 table: %w", err)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	deadline := time.Now().Add(timeout)
	x := &Index{db: db}
	var warns []string
	for _, b := range bases {
		c, w, err := x.add(ctx, b, o, deadline)
		warns = append(warns, w...)
		if err != nil {
			db.Close()
			return nil, warns, err
		}
		x.contexts = append(x.contexts, c)
	}
	return x, warns, nil
}

// Close releases the index.
func (x *Index) Close() error { return x.db.Close() }

// Contexts returns the indexed contexts, in the order of the bases given
// to Build.
func (x *Index) Contexts() []Context { return append([]Context(nil), x.contexts...) }

func contextID(name, source string) string {
	h := sha256.Sum256([]byte(name + "\x00" + source))
	return hex.EncodeToString(h[:4])
}

// add indexes one base.
func (x *Index) add(ctx context.Context, b Base, o Options, deadline time.Time) (Context, []string, error) {
	if b.Name == "" {
		b.Name = filepath.Base(b.Source)
	}
	c := Context{ID: contextID(b.Name, b.Source), Name: b.Name, Description: b.Description, Source: b.Source}
	var warns []string
	switch strings.ToLower(b.IndexType) {
	case "", "fast":
	case "best":
		warns = append(warns, fmt.Sprintf("knowledge base %q: indexType \"best\" (semantic, all-MiniLM-L6-v2) is not available in strata; indexed as \"fast\" (lexical BM25)", b.Name))
	default:
		warns = append(warns, fmt.Sprintf("knowledge base %q: unknown indexType %q (want fast or best); indexed as \"fast\"", b.Name, b.IndexType))
	}
	st, err := os.Stat(b.Source)
	if err == nil {
		_, err = tool.ResolvePath(o.Env, b.Source, tool.AccessRead)
	}
	if err != nil {
		return c, append(warns, fmt.Sprintf("knowledge base %q: source %s: %v; listed with no content", b.Name, b.Source, err)), nil
	}
	tx, err := x.db.BeginTx(ctx, nil)
	if err != nil {
		return c, warns, fmt.Errorf("knowledge: %w", err)
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO chunks(context_id, path, start_line, end_line, body) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return c, warns, fmt.Errorf("knowledge: %w", err)
	}
	defer ins.Close()
	var notes []string // why files were skipped, the first few
	index := func(abs, rel string) error {
		// Sandbox, regular file and size are checked before anything is read.
		data, err := tool.ReadFileIn(o.Env, abs, MaxFileBytes)
		if err != nil || bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
			c.Skipped++
			if err != nil && len(notes) < 3 {
				notes = append(notes, err.Error())
			}
			return nil
		}
		c.Files++
		for _, ch := range chunk(string(data)) {
			if _, err := ins.ExecContext(ctx, c.ID, rel, ch.start, ch.end, ch.text); err != nil {
				return fmt.Errorf("knowledge: index %s: %w", abs, err)
			}
			c.Chunks++
		}
		if o.Progress != nil && (c.Files+c.Skipped)%1000 == 0 {
			o.Progress(fmt.Sprintf("knowledge base %q: %d files indexed, %d skipped", b.Name, c.Files, c.Skipped))
		}
		return nil
	}
	late := func() bool {
		if time.Now().Before(deadline) {
			return false
		}
		warns = append(warns, fmt.Sprintf("knowledge base %q: indexing stopped after %d files at the time limit (knowledge.Options.Timeout); "+
			"the rest is not searchable: narrow the base with include/exclude", b.Name, c.Files+c.Skipped))
		return true
	}
	if !st.IsDir() {
		if err := index(b.Source, ""); err != nil {
			return c, warns, err
		}
	} else {
		err = filepath.WalkDir(b.Source, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable entries are skipped
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if late() {
				return fs.SkipAll
			}
			if d.IsDir() {
				if d.Name() == ".git" {
					return filepath.SkipDir
				}
				if _, err := tool.ResolvePath(o.Env, p, tool.AccessRead); err != nil && p != b.Source {
					return filepath.SkipDir // a denied folder is not walked
				}
				return nil
			}
			rel, _ := filepath.Rel(b.Source, p)
			rel = filepath.ToSlash(rel)
			if !selected(rel, b.Include, b.Exclude) {
				return nil
			}
			if c.Files+c.Skipped >= MaxFiles {
				warns = append(warns, fmt.Sprintf("knowledge base %q: stopped at %d files (knowledge.MaxFiles)", b.Name, MaxFiles))
				return fs.SkipAll
			}
			if !d.Type().IsRegular() {
				c.Skipped++ // a FIFO, socket, device or symlink: never opened
				if len(notes) < 3 {
					notes = append(notes, fmt.Sprintf("%s: %v (%s)", p, tool.ErrNotRegular, d.Type()))
				}
				return nil
			}
			return index(p, rel)
		})
		if err != nil {
			return c, warns, err
		}
	}
	if len(notes) > 0 {
		warns = append(warns, fmt.Sprintf("knowledge base %q: %d file(s) skipped, e.g. %s", b.Name, c.Skipped, strings.Join(notes, "; ")))
	}
	if o.Progress != nil {
		o.Progress(fmt.Sprintf("knowledge base %q: %d files indexed, %d skipped", b.Name, c.Files, c.Skipped))
	}
	if err := tx.Commit(); err != nil {
		return c, warns, fmt.Errorf("knowledge: %w", err)
	}
	return c, warns, nil
}

// selected applies the include and exclude patterns (kiro
// knowledge-management.md: "`*.rs` - All Rust files in all directories
// recursively (equivalent to `**/*.rs`)"; no include = every file).
func selected(rel string, include, exclude []string) bool {
	match := func(pats []string) bool {
		for _, p := range pats {
			if !strings.Contains(p, "/") {
				p = "**/" + p
			}
			if ok, _ := doublestar.Match(p, rel); ok {
				return true
			}
		}
		return false
	}
	return (len(include) == 0 || match(include)) && !match(exclude)
}

type piece struct {
	start, end int
	text       string
}

// chunk splits text into chunks of at most ChunkLines lines.
func chunk(text string) []piece {
	var out []piece
	var b strings.Builder
	start, n := 1, 0
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), MaxFileBytes+1)
	for sc.Scan() {
		n++
		b.WriteString(sc.Text() + "\n")
		if n-start+1 == ChunkLines {
			out = append(out, piece{start, n, b.String()})
			b.Reset()
			start = n + 1
		}
	}
	if b.Len() > 0 {
		out = append(out, piece{start, n, b.String()})
	}
	return out
}

// ftsQuery turns free text into an FTS5 query: every word (letters and
// digits) quoted, joined with OR, so punctuation in a question never is FTS5
// syntax; BM25 ranks chunks matching more words higher. "" when the text
// has no word.
func ftsQuery(q string) string {
	words := strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	return strings.Join(words, " OR ")
}

// context finds a context by id or name.
func (x *Index) context(ref string) (Context, error) {
	for _, c := range x.contexts {
		if c.ID == ref || c.Name == ref {
			return c, nil
		}
	}
	var known []string
	for _, c := range x.contexts {
		known = append(known, c.ID+" ("+c.Name+")")
	}
	return Context{}, fmt.Errorf("%w %q (contexts: %s)", ErrUnknownContext, ref, strings.Join(known, ", "))
}

// Search returns the limit best chunks for query (BM25, best first), in
// every context or only in contextRef (an id or a name). A query without
// any word is an error; an unknown context is ErrUnknownContext.
func (x *Index) Search(ctx context.Context, query, contextRef string, limit int) ([]Hit, error) {
	q := ftsQuery(query)
	if q == "" {
		return nil, fmt.Errorf("knowledge: query %q has no word to search for", query)
	}
	names := map[string]string{}
	for _, c := range x.contexts {
		names[c.ID] = c.Name
	}
	sqlText := `SELECT context_id, path, start_line, end_line, body, bm25(chunks) FROM chunks WHERE chunks MATCH ?`
	args := []any{q}
	if contextRef != "" {
		c, err := x.context(contextRef)
		if err != nil {
			return nil, err
		}
		sqlText += ` AND context_id = ?`
		args = append(args, c.ID)
	}
	sqlText += ` ORDER BY bm25(chunks), rowid LIMIT ?`
	args = append(args, limit)
	rows, err := x.db.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return nil, fmt.Errorf("knowledge: search %q: %w", query, err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.ContextID, &h.Path, &h.StartLine, &h.EndLine, &h.Text, &h.Score); err != nil {
			return nil, fmt.Errorf("knowledge: search %q: %w", query, err)
		}
		h.ContextName, h.Score = names[h.ContextID], -h.Score // bm25() is lower-is-better; report higher-is-better
		hits = append(hits, h)
	}
	return hits, rows.Err()
}
