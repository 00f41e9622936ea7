//go:build unix

package tool

import (
	"io/fs"
	"syscall"
)

// sysLinkCount returns st_nlink from fi's stat data (0 when there is none).
func sysLinkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

// openNoFollow are the open flags of ReadFileIn: no final symlink
// followed, and no blocking open (a FIFO without a writer).
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
