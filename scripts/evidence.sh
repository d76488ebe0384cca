#!/usr/bin/env bash
# The nightly evidence workflow's steps, one subcommand each, so that the
# suite runs the same commands the workflow runs.
#
#   scripts/evidence.sh estates [--with-bench]  the estates, as a JSON list (and
#                                               plan-from-nothing, the weekly benchmark)
#   scripts/evidence.sh run ESTATE [ARGS...]    build the engine, run one estate
#   scripts/evidence.sh run plan-from-nothing   the benchmark's page, as its page reproduces it
#   scripts/evidence.sh merge-history SAVED     earlier nights' lines into reports/history
#   scripts/evidence.sh keep-history SAVED      reports/history's lines into SAVED
#   scripts/evidence.sh site [ARGS...]          render the site from reports/
#
# `run` exits as the gauntlet does: 0 when every stage passes, 1 when one is
# red (the pages are written), 2 when the run could not start. GAUNTLET
# names a built gauntlet binary to use instead of `cargo run`; REPORTS the
# reports folder (default: reports).
set -euo pipefail
cd "$(dirname "$0")/.."
reports=${REPORTS:-reports}

gauntlet() {
  if [[ -n ${GAUNTLET:-} ]]; then
    "$GAUNTLET" "$@"
  else
    cargo run -q -p gauntlet -- "$@"
  fi
}

# Each history file is one line per run, starting with the run's date, so
# sorted unique lines are the runs in order, whichever copy held them.
merge() {
  local from=$1 into=$2 f
  mkdir -p "$into"
  for f in "$from"/*.jsonl; do
    [[ -e $f ]] || continue
    touch "$into/$(basename "$f")"
    sort -u "$f" "$into/$(basename "$f")" -o "$into/$(basename "$f")"
  done
}

case ${1:-} in
  estates)
    printf '['
    sep=
    for m in estates/*/estate.toml; do
      printf '%s"%s"' "$sep" "$(basename "$(dirname "$m")")"
      sep=,
    done
    [[ ${2:-} != --with-bench ]] || printf '%s"plan-from-nothing"' "$sep"
    printf ']\n'
    ;;
  run)
    [[ $# -ge 2 ]] || { echo "usage: $0 run ESTATE [ARGS...]" >&2; exit 2; }
    shift
    if [[ $1 == plan-from-nothing ]]; then
      # The sizes the committed page measured, unless SIZES says otherwise.
      SHAPE=simple SIZES=${SIZES:-"15 100 500"} PAGE=$reports/plan-from-nothing.md scripts/bench-plan.sh
      exit
    fi
    [[ -n ${GAUNTLET:-} ]] || cargo build -q -p engine --bin choudoufu
    gauntlet run --reports-dir "$reports" "$@"
    ;;
  merge-history)
    [[ $# -eq 2 ]] || { echo "usage: $0 merge-history SAVED" >&2; exit 2; }
    merge "$2" "$reports/history"
    ;;
  keep-history)
    [[ $# -eq 2 ]] || { echo "usage: $0 keep-history SAVED" >&2; exit 2; }
    merge "$reports/history" "$2"
    ;;
  site)
    shift
    gauntlet site --reports-dir "$reports" "$@"
    ;;
  *)
    sed -n '2,15p' "$0" >&2
    exit 2
    ;;
esac
