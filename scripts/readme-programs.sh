#!/usr/bin/env bash
# Builds every ```go block in README.md against this module, so that the
# README cannot drift from the API, except the Quick start's, which reads
# through go-ethereum and so builds in the example's module
# (scripts/readme-quickstart.sh). A block that starts with "package main"
# is built as it stands. Any other block is a fragment: it goes into a file
# of its own that imports a fixed set of packages and declares the names the
# README's prose takes as given (monitor and endpoints from the Quick start,
# and ctx, a Check's context). A fragment made only of declarations goes at
# the file's top level; any other goes inside a function. A compile error
# names the README's own line. blocklagprom/README.md's blocks are built the
# same way, against the blocklagprom module. Run from anywhere; it writes
# nothing into the tree and cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")/.."

# A module of their own outside the tree, which takes blocklag and failnext
# from this checkout as this module does.
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# build README DIR writes each ```go block of README outside its Quick
# start section into a package of its own below DIR, as the rules above
# say, using $prelude, and builds them all in the module at DIR. A README
# must hold at least one Go block, the Quick start's included.
build() {
	local readme=$1
	local dir=$2
	awk -v dir="$dir" -v readme="$readme" '
		/^## / { quickstart = ($0 == "## Quick start") }
		/^```go$/ { inside = 1; start = NR + 1; body = ""; statements = 0; seen++; next }
		/^```$/ && inside {
			inside = 0
			if (quickstart)
				next
			pkg = sprintf("%s/line%d", dir, start)
			system("mkdir -p " pkg)
			file = pkg "/main.go"
			directive = sprintf("//line %s:%d\n", readme, start)
			if (body ~ /^package main\n/)
				printf "%s%s", directive, body > file
			else if (statements)
				printf "%s\nfunc _() {\n%s%s}\n", ENVIRON["prelude"], directive, body > file
			else
				printf "%s\n%s%s", ENVIRON["prelude"], directive, body > file
			close(file)
			next
		}
		inside {
			body = body $0 "\n"
			# A line at the left margin that is not a declaration, a
			# comment or a closing bracket makes the block a list of
			# statements.
			if ($0 ~ /^[^ \t\/)}]/ && $0 !~ /^(func|type|var|const|package|import)[ (]/)
				statements = 1
		}
		END { if (!seen) { print readme " has no Go block" > "/dev/stderr"; exit 1 } }
	' "$readme"
	local blocks
	blocks=$(find "$dir" -name main.go | wc -l)
	if [ "$blocks" -eq 0 ]; then
		echo "$readme: no Go block besides the Quick start's"
		return
	fi
	(cd "$dir" && go build -o /dev/null ./...)
	echo "$readme: $blocks Go block(s) build"
}

dir=$tmp/root
mkdir "$dir"
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

# The start of every fragment's file. The list after the declarations uses
# each import once, so a fragment need not use them all.
export prelude='package fragment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

var (
	ctx       context.Context
	monitor   *blocklag.Monitor
	endpoints []failnext.Endpoint
)

var _ = []any{json.Marshal, errors.New, fmt.Sprint, io.EOF, log.Printf, slog.Info,
	http.DefaultTransport, os.Exit, strings.Cut, time.Now, failnext.New, blocklag.New}
'

build README.md "$dir"

# blocklagprom/README.md, by the same rules, against the blocklagprom
# module: its fragments build in a module of their own that shares a
# workspace with blocklagprom, so they see the packages, the versions and
# the go.sum that blocklagprom itself builds with. Its prose takes monitor,
# a registry reg and ctx as given.
dir=$tmp/blocklagprom
mkdir "$dir"
printf 'module readmeprograms/blocklagprom\n\ngo 1.24\n' > "$dir/go.mod"
printf 'go 1.24\n\nuse (\n\t.\n\t%s\n)\n' "$root/blocklagprom" > "$dir/go.work"
export prelude='package fragment

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

var (
	ctx     context.Context
	monitor *blocklag.Monitor
	reg     *prometheus.Registry
)

var _ = []any{errors.New, fmt.Sprint, log.Printf, http.DefaultTransport, time.Now,
	promhttp.HandlerFor, failnext.New, blocklag.New, blocklagprom.NewCollector}
'

GOWORK="$dir/go.work" build blocklagprom/README.md "$dir"
