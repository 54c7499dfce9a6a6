#!/usr/bin/env bash
# Builds and vets README.md's Quick start as it stands. The Quick start is a
# fragment: the body of a function that has a ctx and returns an error,
# which reads through go-ethereum. So it goes into such a function, in a
# file that imports what the fragment uses, in a copy of the go-ethereum
# example's module (its go.mod and go.sum, with this checkout in place of
# the published modules), where go-ethereum is. A compile error names the
# README's own line. It also fails when the fragment is longer than 40
# lines or not as gofmt writes it, and when Installation's go get of
# go-ethereum names another version than the example's. Run from anywhere; it writes nothing
# into the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The first ```go block after the Quick start heading, and the README line
# it starts on.
start=$(awk '
	/^## Quick start$/ { section = 1; next }
	section && /^## / { exit }
	section && /^```go$/ { print NR + 1; exit }
' README.md)
if [ -z "$start" ]; then
	echo "README.md's Quick start has no Go block"
	exit 1
fi
awk -v start="$start" 'NR >= start && /^```$/ { exit } NR >= start { print }' README.md > "$tmp/fragment"
lines=$(wc -l < "$tmp/fragment")
echo "== README.md's Quick start: $lines lines of Go, from line $start"
if [ "$lines" -gt 40 ]; then
	echo "README.md's Quick start has $lines lines of Go, more than 40"
	exit 1
fi

# The function around it. The list after the imports uses each of them
# once, so that the fragment need not use them all.
wrap() {
	cat <<'GO'
package quickstart

import (
	"context"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
)

var _ = []any{context.Background, log.Printf, http.DefaultTransport, os.Getenv, time.Now,
	ethclient.NewClient, rpc.DialOptions, failnext.New, blocklag.New}

func quickstart(ctx context.Context) error {
GO
	printf '%s' "$1"
	sed 's/^./\t&/' "$tmp/fragment"
	printf '\treturn nil\n}\n'
}

mkdir "$tmp/format"
wrap "" > "$tmp/format/quickstart.go"
unformatted=$(gofmt -l "$tmp/format")
if [ -n "$unformatted" ]; then
	echo "README.md's Quick start is not as gofmt writes it:"
	gofmt -d "$tmp/format" | sed -n '/^@@/,$p'
	exit 1
fi

module=$tmp/module
mkdir -p "$module/quickstart"
cp examples/goethereum/go.mod examples/goethereum/go.sum "$module"
(
	cd "$module"
	go mod edit -module readmequickstart \
		-replace "github.com/yermakovsa/failnext=$root/third_party/failnext" \
		-replace "github.com/yermakovsa/failnext-blocklag=$root" \
		-replace "github.com/yermakovsa/failnext-blocklag/blocklagprom=$root/blocklagprom"
)
wrap "//line README.md:$start
" > "$module/quickstart/quickstart.go"
(
	cd "$module"
	go build ./...
	go vet ./...
)
echo "README.md's Quick start builds and passes go vet"

# The go get that Installation names is the go-ethereum the example requires.
geth=$(cd examples/goethereum && go list -m -f '{{.Version}}' github.com/ethereum/go-ethereum)
if ! grep -q "go get github.com/ethereum/go-ethereum@$geth\$" README.md; then
	echo "README.md's Installation does not name go get github.com/ethereum/go-ethereum@$geth"
	exit 1
fi
