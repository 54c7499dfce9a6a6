#!/usr/bin/env bash
# Follows README.md's Installation recipe for building against a clone
# before the modules are published, line by line as the README has them,
# from an empty folder: the recipe's lines are taken from README.md itself,
# and only its git clone is replaced, by a link to this checkout. Then it
# builds the README's Quick start in the consumer module the recipe made,
# runs it with no list (it must say how to write one), and builds and runs
# a small program beside it that imports blocklag and blocklagprom and
# checks what it prints. Run from anywhere; it writes nothing into the tree.
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

bash "$clone/scripts/readme-quickstart.sh" > main.go

# One provider on loopback, a Monitor that checks it, and a registry
# holding blocklagprom's collector: what it prints is one gathered series.
mkdir promcheck
cat > promcheck/main.go <<'PROG'
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
go build -o quickstart .
go build -o promcheck/promcheck ./promcheck

status=0
got=$(env -u ETH_RPC_URLS ./quickstart 2>&1) || status=$?
if [ "$status" -eq 0 ] || ! grep -q "ETH_RPC_URLS='a=https://" <<<"$got"; then
	echo "the Quick start built through the workspace, run with no list, exited with status $status and printed \"$got\"; want an error status and a line that says how to write the list"
	exit 1
fi
echo "== the Quick start, with no list: $got"
got=$(./promcheck/promcheck)
if [ "$got" != "reference 42, 1 series" ]; then
	echo "the consumer built through the workspace printed \"$got\", want \"reference 42, 1 series\""
	exit 1
fi
echo "== workspace recipe: a fresh module built the Quick start and ran against this clone: $got"
