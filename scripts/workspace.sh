#!/usr/bin/env bash
# Follows README.md's Installation recipe for building against a clone
# before the modules are published: from a fresh consumer module outside
# this checkout, go work init, go work use for the clone and its
# blocklagprom, the failnext stand-in by replace; then builds and runs a
# small program that imports blocklag and blocklagprom and checks what it
# prints. Run from anywhere; it writes nothing into the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
clone=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir "$tmp/consumer"
cd "$tmp/consumer"
go mod init example.com/consumer
go work init
go work use . "$clone" "$clone/blocklagprom"
go work edit -replace "github.com/yermakovsa/failnext=$clone/third_party/failnext"

# One provider on loopback, a Monitor that checks it, and a registry
# holding blocklagprom's collector: what it prints is one gathered series.
cat > main.go <<'EOF'
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
EOF
go build -o consumer .
got=$(./consumer)
if [ "$got" != "reference 42, 1 series" ]; then
	echo "the consumer built through the workspace printed \"$got\", want \"reference 42, 1 series\""
	exit 1
fi
echo "== workspace recipe: a fresh module built and ran against this clone: $got"
