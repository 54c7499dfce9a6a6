// Package failnext is an offline stand-in for github.com/yermakovsa/failnext
// v0.6.0: an http.RoundTripper that sends each request to the first usable
// endpoint of a small, ordered, fixed set and moves on to the next one when
// an attempt fails with a transport error or a trigger status (502, 503, 504
// and any configured additions), as far as the request's failover permission
// and body allow.
//
// The stand-in exports the same declarations as the real v0.6.0, no more and
// no fewer, and behaves the same way as far as a caller can observe,
// defaults included: unless Config.Cooldown disables it, an endpoint that
// fails three times in a row is left out for 30 seconds. It is not the real
// module; README.md says why it exists.
package failnext
