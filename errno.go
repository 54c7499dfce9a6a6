//go:build !plan9

package blocklag

import (
	"errors"
	"syscall"
)

// errnoIn returns the syscall.Errno that err's chain holds, if any. Plan 9
// has no Errno, hence a file of its own.
func errnoIn(err error) (error, bool) {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno, true
	}
	return nil, false
}
