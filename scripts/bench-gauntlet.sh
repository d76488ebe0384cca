#!/usr/bin/env bash
# Runs one estate with an optimised gauntlet and prints where the wall time
# went: terraform and its provider, the emulator, the witness, and the
# harness's own overhead. The figures go into BENCHMARKS.md.
#
#   scripts/bench-gauntlet.sh [estate]
set -euo pipefail
cd "$(dirname "$0")/.."
estate=${1:-reference-aws-stateful}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cargo build --quiet --release -p gauntlet
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sr)"
./target/release/gauntlet run "$estate" --reports-dir "$out" --work-dir "$out/work" 2>/dev/null |
  sed -n '/^| where/,/^| total/p'
