#!/usr/bin/env bash
# Runs the example's continuous command, the program README.md tells a
# newcomer to copy, against local providers whose URLs hold API keys in
# the path, in the query and in user:password@ (ones that answer, lag, run
# far ahead, reject the key and echo it, refuse connections, hang up, never
# answer, or redirect reads to another provider), and with mistyped
# variables. It fails if anything the command prints shows 8 bytes of a
# key, user name or password, if any provider receives anything of
# another's URL or lacks its own credentials, if a mistyped list is not
# refused in one line that shows none of it, if a provider far ahead of two
# others is read, or if a provider that refuses connections for several
# checks is logged more than once, or more than once when it recovers.
# scripts/leakcheck runs the providers and the command. Run from anywhere;
# it writes nothing into the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd examples/goethereum && go build -o "$tmp/continuous" ./continuous)
(cd scripts/leakcheck && go build -o "$tmp/leakcheck" .)

echo "== the continuous command against providers whose URLs hold keys, and with mistyped variables"
# Checks every 100 ms, so that the provider that stops accepting
# connections meets several checks in a second.
"$tmp/leakcheck" "$tmp/continuous" -check-every 100ms
