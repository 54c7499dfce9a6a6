module github.com/yermakovsa/failnext-blocklag

go 1.24

require github.com/yermakovsa/failnext v0.6.0

// The module proxy we build with does not serve failnext; build against our
// offline stand-in. Consumers of blocklag ignore this and get the real v0.6.0.
replace github.com/yermakovsa/failnext => ./third_party/failnext
