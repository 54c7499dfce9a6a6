#!/usr/bin/env bash
# Checks that blocklagprom/dashboard.json is what its generator writes
# today: runs the generator twice into a temporary folder, fails when the
# two runs differ (the output must not depend on the run), and fails with
# a diff when they differ from the committed file. Also checks that
# `go generate` in the generator's module still writes that file. Run from
# anywhere; it writes nothing into the tree.
set -euo pipefail
cd "$(dirname "$0")/../blocklagprom/dashboard"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

committed=../dashboard.json
echo "== dashboard: blocklagprom/dashboard.json against its generator"
if ! grep -qx '//go:generate go run . -o ../dashboard.json' ./*.go; then
	echo "no file of blocklagprom/dashboard has the line"
	echo "//go:generate go run . -o ../dashboard.json, so go generate does not write $committed"
	exit 1
fi
go run . -o "$tmp/first.json"
go run . -o "$tmp/second.json"
if ! cmp -s "$tmp/first.json" "$tmp/second.json"; then
	echo "two runs of the generator wrote different dashboards; it must write the same bytes every run:"
	diff -u "$tmp/first.json" "$tmp/second.json" || true
	exit 1
fi
if ! cmp -s "$committed" "$tmp/first.json"; then
	echo "blocklagprom/dashboard.json is not what its generator writes."
	echo "Run 'go generate ./...' in blocklagprom/dashboard and commit the file. The difference:"
	diff -u --label committed --label generated "$committed" "$tmp/first.json" || true
	exit 1
fi
echo "blocklagprom/dashboard.json is up to date"
