#!/usr/bin/env bash
# Runs the root package's tests the way a user's `go test all` does: as a
# dependency required at its release version, from a read-only copy of the
# module holding what the module proxy would serve (no nested modules).
# failnext comes from the stand-in, as the proxy here does not serve it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT

# The files of the root module: tracked files outside every directory that
# holds a go.mod of its own.
copy="$work/blocklag@v0.1.0"
mkdir -p "$copy"
nested=$(cd "$repo" && git ls-files '*/go.mod' | xargs -r -n1 dirname)
(cd "$repo" && git ls-files) | while read -r f; do
	for dir in $nested; do
		case "$f" in "$dir"/*) continue 2 ;; esac
	done
	mkdir -p "$copy/$(dirname "$f")"
	cp "$repo/$f" "$copy/$f"
done
cp -r "$repo/third_party/failnext" "$work/failnext"
chmod -R a-w "$copy"

mkdir "$work/consumer"
cd "$work/consumer"
cat > go.mod <<MOD
module example.com/consumer

go 1.24

require (
	github.com/yermakovsa/failnext v0.6.0
	github.com/yermakovsa/failnext-blocklag v0.1.0
)

replace (
	github.com/yermakovsa/failnext => $work/failnext
	github.com/yermakovsa/failnext-blocklag => $copy
)
MOD
cat > main.go <<'GO'
package main

import blocklag "github.com/yermakovsa/failnext-blocklag"

func main() { _, _ = blocklag.New(blocklag.Config{}) }
GO
echo "== the root module's tests as a dependency at v0.1.0, from a read-only copy"
go test -count=1 -timeout 5m github.com/yermakovsa/failnext-blocklag/...
