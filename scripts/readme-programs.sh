#!/usr/bin/env bash
# Builds every complete Go program (a ```go block that starts with
# "package main") in README.md against this module, so that the README
# cannot drift from the API. Run from anywhere; it cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")/.."

# Inside the module, so that the programs resolve blocklag and failnext as
# the module does; the leading _ keeps ./... away from it.
dir=$(mktemp -d ./_readme.XXXXXX)
trap 'rm -rf "$dir"' EXIT

awk -v dir="$dir" '
	/^```go$/ { inside = 1; n++; body = ""; next }
	/^```$/ && inside {
		inside = 0
		if (body ~ /^package main\n/) {
			file = sprintf("%s/p%d/main.go", dir, n)
			system("mkdir -p " dir "/p" n)
			printf "%s", body > file
			close(file)
		}
		next
	}
	inside { body = body $0 "\n" }
' README.md

programs=0
for program in "$dir"/p*; do
	[ -d "$program" ] || continue
	go build -o /dev/null "./$program"
	programs=$((programs + 1))
done
if [ "$programs" -eq 0 ]; then
	echo "README.md has no complete Go program"
	exit 1
fi
echo "README.md: $programs program(s) build"
