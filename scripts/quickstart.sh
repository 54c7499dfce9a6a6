#!/usr/bin/env bash
# Runs the README's Quick start, exactly as README.md has it, against local
# providers whose URLs hold API keys (one that answers, one that rejects the
# key and echoes the request's path and query, one that refuses
# connections, one that hangs up, one that never answers), and fails if
# anything it prints shows 8 bytes of a key in a row. scripts/leakcheck
# runs the providers and the program. Run from anywhere; it writes nothing
# into the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The Quick start is the first ```go block after its heading.
mkdir "$tmp/quickstart"
awk '
	/^## Quick start$/ { section = 1; next }
	section && /^## / { exit }
	section && /^```go$/ { inside = 1; next }
	inside && /^```$/ { exit }
	inside { print }
' README.md > "$tmp/quickstart/main.go"
if ! head -n 1 "$tmp/quickstart/main.go" | grep -qx 'package main'; then
	echo "README.md's Quick start has no Go block that starts with package main"
	exit 1
fi

# A module of its own, which builds against this checkout through a
# workspace, as the README's Installation has a newcomer do.
(
	cd "$tmp/quickstart"
	go mod init quickstart 2>/dev/null
	go work init . "$root"
	go build -o "$tmp/quickstart.bin" .
)
(cd scripts/leakcheck && go build -o "$tmp/leakcheck" .)

echo "== the Quick start against providers whose URLs hold keys"
"$tmp/leakcheck" "$tmp/quickstart.bin"
