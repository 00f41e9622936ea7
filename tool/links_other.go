//go:build !unix

package tool

import "io/fs"

// sysLinkCount returns 0: this platform's FileInfo does not report hard
// link counts, so the hard-link rule does not apply (see the package doc).
func sysLinkCount(fs.FileInfo) uint64 { return 0 }

// openNoFollow are the extra open flags of ReadFileIn: none here.
const openNoFollow = 0
