package blocklag

// errnoIn finds nothing: Plan 9 reports system errors as text, with no
// number to keep.
func errnoIn(error) (error, bool) { return nil, false }
