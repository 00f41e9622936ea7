//go:build !cgo

package symbols

// parseTreeSitter is unavailable without cgo: only Go files are parsed.
func parseTreeSitter(string, []byte) ([]Symbol, error) { return nil, ErrUnsupported }
