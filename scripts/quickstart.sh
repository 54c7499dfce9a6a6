#!/usr/bin/env bash
# Runs the README's Quick start, exactly as README.md has it, against local
# providers whose URLs hold API keys (ones that answer, lag behind, reject
# the key and echo the request's path and query, refuse connections, hang
# up or never answer, and ones behind user:password@ of their own, listed
# first and not first), and with mistyped lists. It fails if anything the
# program prints shows 8 bytes of a key, user name or password in a row, if
# any provider receives credentials other than its own or lacks its own, on
# probes and reads alike, or if a mistyped list does not end the program
# with one line that says how to write it. scripts/leakcheck runs the
# providers and the program. Run from anywhere; it writes nothing into the
# tree.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir "$tmp/quickstart"
bash scripts/readme-quickstart.sh > "$tmp/quickstart/main.go"

# A module of its own, which builds against this checkout through a
# workspace, as the README's Installation has a newcomer do.
(
	cd "$tmp/quickstart"
	go mod init quickstart 2>/dev/null
	go work init . "$root"
	go build -o "$tmp/quickstart.bin" .
)
(cd scripts/leakcheck && go build -o "$tmp/leakcheck" .)

echo "== the Quick start against providers whose URLs hold keys, and with mistyped lists"
"$tmp/leakcheck" "$tmp/quickstart.bin"
