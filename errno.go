//go:build !plan9

package blocklag

import "syscall"

// errnoOf returns the syscall.Errno that e is, itself or through an As
// method, as errors.As would find it in e; nil when none. Plan 9 has no
// Errno, hence a file of its own.
func errnoOf(e error) error {
	if errno, ok := e.(syscall.Errno); ok {
		return errno
	}
	var errno syscall.Errno
	if as, ok := e.(interface{ As(any) bool }); ok && as.As(&errno) {
		return errno
	}
	return nil
}
