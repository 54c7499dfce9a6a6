#!/usr/bin/env bash
# Runs every test of every Go module in this repository with the race
# detector, plus one quick pass over each benchmark so that they keep
# compiling and running. Needs nothing but Go.
set -euo pipefail
cd "$(dirname "$0")/.."

for mod in $(find . -name go.mod -not -path './.git/*' -exec dirname {} \; | sort); do
	echo "== $mod"
	(cd "$mod" && go test -race -count=1 -bench . -benchtime=1x ./...)
done
