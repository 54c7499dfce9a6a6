module github.com/yermakovsa/failnext-blocklag

go 1.24

require github.com/yermakovsa/failnext v0.6.0

// This repository builds and tests against third_party/failnext, a stand-in
// with the same API as failnext v0.6.0, so that it needs no copy of failnext
// from outside. A replace directive applies only when this module is the main
// module: modules that depend on blocklag ignore it and get the real
// github.com/yermakovsa/failnext v0.6.0 required above.
replace github.com/yermakovsa/failnext => ./third_party/failnext
