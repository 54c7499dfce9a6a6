#!/usr/bin/env bash
# Follows README.md's Installation recipe for building against a clone
# before the modules are published, line by line as the README has them,
# from an empty folder: the recipe's lines are taken from README.md itself,
# and only its git clone is replaced, by a link to this checkout. Then it
# builds and runs, in the consumer module the recipe made, a small program
# that imports failnext, blocklag and blocklagprom, and checks what it
# prints. Run from anywhere; it writes nothing into the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
clone=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The recipe is the indented block of Installation that starts with git clone.
recipe=$(awk '
	/^## Installation$/ { section = 1; next }
	section && /^## / { exit }
	section && /^    git clone / { inside = 1 }
	inside && !/^    / { exit }
	inside { sub(/^    /, ""); print }
' README.md)
clone_line='git clone https://github.com/yermakovsa/failnext-blocklag'
if [ "$(head -n 1 <<<"$recipe")" != "$clone_line" ]; then
	echo "README.md's Installation has no recipe that starts with: $clone_line"
	exit 1
fi
for want in 'go mod init' 'go work init' 'go work use' 'go work edit -replace'; do
	if ! grep -q "$want" <<<"$recipe"; then
		echo "README.md's Installation recipe lacks $want"
		exit 1
	fi
done
echo "== the Installation recipe, from an empty folder:"
echo "$recipe"
mkdir "$tmp/empty"
(
	cd "$tmp/empty"
	ln -s "$clone" failnext-blocklag # in place of the clone
	bash -euo pipefail -c "$(tail -n +2 <<<"$recipe")"
)
consumer=$(find "$tmp/empty" -mindepth 2 -maxdepth 2 -name go.work -printf '%h\n')
if [ "$(wc -l <<<"$consumer")" -ne 1 ] || [ ! -f "$consumer/go.mod" ]; then
	echo "the recipe did not make one folder holding go.mod and go.work"
	exit 1
fi
cd "$consumer"

# One provider on loopback, a Monitor that checks it, and a registry
# holding blocklagprom's collector: what it prints is one gathered series.
cat > main.go <<'PROG'
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/yermakovsa/failnext"
	blocklag "github.com/yermakovsa/failnext-blocklag"
	"github.com/yermakovsa/failnext-blocklag/blocklagprom"
)

func main() {
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"0x2a"}`)
	}))
	defer provider.Close()
	monitor, err := blocklag.New(blocklag.Config{Endpoints: []failnext.Endpoint{{ID: "local", URL: provider.URL}}})
	if err != nil {
		log.Fatal(err)
	}
	if err := monitor.Check(context.Background()); err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(blocklagprom.NewCollector(monitor))
	n, err := testutil.GatherAndCount(reg, "blocklag_reference_height")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("reference %d, %d series\n", monitor.Status().Reference, n)
}
PROG
go build -o promcheck .
got=$(./promcheck)
if [ "$got" != "reference 42, 1 series" ]; then
	echo "the consumer built through the workspace printed \"$got\", want \"reference 42, 1 series\""
	exit 1
fi
echo "== workspace recipe: a fresh module built a program on this clone, which printed: $got"
