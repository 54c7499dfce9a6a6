#!/usr/bin/env bash
# Builds every complete Go program (a ```go block that starts with
# "package main") in README.md against this module, so that the README
# cannot drift from the API. Run from anywhere; it cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")/.."

# A module of their own outside the tree, which takes blocklag and failnext
# from this checkout as this module does, so nothing is written into it.
root=$(pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/go.mod" <<EOF
module readmeprograms

go 1.24

require (
	github.com/yermakovsa/failnext v0.6.0
	github.com/yermakovsa/failnext-blocklag v0.0.0
)

replace github.com/yermakovsa/failnext-blocklag => $root

replace github.com/yermakovsa/failnext => $root/third_party/failnext
EOF

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
	(cd "$dir" && go build -o /dev/null "./$(basename "$program")")
	programs=$((programs + 1))
done
if [ "$programs" -eq 0 ]; then
	echo "README.md has no complete Go program"
	exit 1
fi
echo "README.md: $programs program(s) build"
