package blocklag

// errnoOf finds nothing: Plan 9 reports system errors as text, with no
// number to keep.
func errnoOf(error) error { return nil }
