#!/usr/bin/env bash
# Runs every Go fuzz target of the module for a short time (default 10s each):
# decoders of network input must never panic.
set -euo pipefail
fuzztime=${1:-10s}
cd "$(dirname "$0")/.."
found=0
while IFS= read -r file; do
	dir=$(dirname "$file")
	for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
		found=$((found + 1))
		echo "fuzz: $dir $target ($fuzztime)"
		go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$dir"
	done
done < <(grep -rlE '^func Fuzz' --include='*_test.go' . | grep -v '^./build/' | sort)
echo "fuzz: $found targets passed"
