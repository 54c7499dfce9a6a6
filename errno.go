//go:build !plan9

package blocklag

import "syscall"

// errnoOf returns the syscall.Errno that e itself is, or nil. Plan 9 has no
// Errno, hence a file of its own.
func errnoOf(e error) error {
	if errno, ok := asItself[syscall.Errno](e); ok {
		return errno
	}
	return nil
}
