#!/usr/bin/env bash
# Prints the README's Quick start program: the first ```go block after the
# Quick start heading of README.md. quickstart.sh and workspace.sh both
# build it, and one definition here keeps them building the same program.
# Fails, on standard error, when that block is not a package main, so that
# a README edit shows up as itself rather than as a compile error. Run from
# anywhere; it writes nothing into the tree.
set -euo pipefail
cd "$(dirname "$0")/.."

program=$(awk '
	/^## Quick start$/ { section = 1; next }
	section && /^## / { exit }
	section && /^```go$/ { inside = 1; next }
	inside && /^```$/ { exit }
	inside { print }
' README.md)
if [ "$(head -n 1 <<<"$program")" != 'package main' ]; then
	echo "README.md's Quick start has no Go block that starts with package main" >&2
	exit 1
fi
printf '%s\n' "$program"
