#!/usr/bin/env bash
# Runs the example's demo as the README gives it, `continuous -dev`, and
# checks what a newcomer sees: that it exits by itself with status 0 (it
# is given three minutes to, for a one-minute story), that every line it
# logs, date and shutdown included, fits in 200 bytes, that it says in
# words when the reference height falls and why, and that it says nothing
# twice: once the fresh node stops, its failure is one line, not one per
# check, while it logs every read, the routine ones included. Run from
# anywhere; it writes nothing into the tree.
set -euo pipefail
cd "$(dirname "$0")/../examples/goethereum"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/continuous" ./continuous
echo "== the -dev demo, to its end"
status=0
timeout 180 "$tmp/continuous" -dev > "$tmp/log" 2>&1 || status=$?
failed=0
if [ "$status" -ne 0 ]; then
	echo "continuous -dev exited with status $status (124: still running after 180 s), want 0"
	failed=1
fi
long=$(LC_ALL=C awk 'length($0) > 200 { printf "line %d: %d bytes\n", NR, length($0) }' "$tmp/log")
if [ -n "$long" ]; then
	echo "continuous -dev logged lines longer than 200 bytes:"
	echo "$long"
	failed=1
fi
if ! grep -q 'WARN reference fell, reads go back in time: the provider that led stopped answering .*led=backup' "$tmp/log"; then
	echo "continuous -dev never said that the reference fell when the backup, which led, stopped"
	failed=1
fi
# Every line but a read's says what changed, so none comes twice once its
# date and time are left out.
repeated=$(cut -d ' ' -f 3- "$tmp/log" | grep -Ev '^(DEBUG|INFO|WARN) read( |$)' | sort | uniq -d)
if [ -n "$repeated" ]; then
	echo "continuous -dev logged these lines more than once:"
	echo "$repeated"
	failed=1
fi
# A read every 2 s for a minute: the routine ones, served by the provider
# that served the last, are logged too (at the debug level).
if [ "$(grep -c ' DEBUG read block=' "$tmp/log")" -lt 10 ]; then
	echo "continuous -dev did not log its routine reads"
	failed=1
fi
if [ "$(grep -c 'probe failed provider=backup' "$tmp/log")" -ne 1 ]; then
	echo "continuous -dev did not log the stopped backup's failure exactly once"
	failed=1
fi
if [ "$failed" -ne 0 ]; then
	echo "its log:"
	cat "$tmp/log"
	exit 1
fi
echo "continuous -dev: exit status 0, $(wc -l < "$tmp/log") lines of at most 200 bytes, none said twice," \
	"and the reference's fall explained"
