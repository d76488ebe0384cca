#!/usr/bin/env bash
# Times `providers schema -json` for the pinned aws provider: stock terraform
# against choudoufu cold (empty schema cache) and cached, in one run, with the
# peak memory of each engine process and of its provider. Prints a Markdown
# table for BENCHMARKS.md.
#
# Finds terraform on PATH or through TERRAFORM, and the provider mirror in
# CHOUDOUFU_BENCH_MIRROR or live/aws-lane.toml's provider_mirrors.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
terraform=${TERRAFORM:-terraform}

read -r version mirror < <(python3 - <<'PY'
import os, tomllib
pins = tomllib.load(open("live/aws-lane.toml", "rb"))["oracle"]
v = pins["aws_provider"]
dirs = [os.environ["CHOUDOUFU_BENCH_MIRROR"]] if os.environ.get("CHOUDOUFU_BENCH_MIRROR") else pins["provider_mirrors"]
found = [d for d in dirs if os.path.isdir(f"{d}/registry.terraform.io/hashicorp/aws/{v}")]
if not found:
    raise SystemExit(f"aws provider {v} is in none of {dirs}")
print(v, found[0])
PY
)

cargo build --quiet --release -p engine --bin choudoufu
choudoufu=${CARGO_TARGET_DIR:-target}/release/choudoufu
choudoufu=$(realpath "$choudoufu")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'provider_installation {\n  filesystem_mirror {\n    path = "%s"\n  }\n}\n' "$mirror" > "$work/cli.tfrc"
for root in terraform choudoufu; do
  mkdir -p "$work/$root"
  printf 'terraform {\n  required_providers {\n    aws = {\n      source  = "hashicorp/aws"\n      version = "%s"\n    }\n  }\n}\n' "$version" > "$work/$root/main.tf"
done
export TF_CLI_CONFIG_FILE=$work/cli.tfrc CHECKPOINT_DISABLE=1
(cd "$work/terraform" && "$terraform" init -input=false >/dev/null)
(cd "$work/choudoufu" && "$choudoufu" init -input=false >/dev/null)

# run DIR CMD...: prints "seconds engine_peak_kb provider_peak_kb".
run() {
  local dir=$1; shift
  local start end pid hwm=0 child_hwm=0 h
  start=$(date +%s.%N)
  (cd "$dir" && exec "$@" >/dev/null) &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    h=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [[ -n $h && $h -gt $hwm ]] && hwm=$h
    for c in $(cat /proc/"$pid"/task/*/children 2>/dev/null || true); do
      h=$(awk '/VmHWM/ {print $2}' "/proc/$c/status" 2>/dev/null || true)
      [[ -n $h && $h -gt $child_hwm ]] && child_hwm=$h
    done
    sleep 0.05
  done
  wait "$pid"
  end=$(date +%s.%N)
  echo "$(echo "$end - $start" | bc) $hwm $child_hwm"
}

declare -A time engine provider
for ((i = 0; i < runs; i++)); do
  read -r t e p < <(run "$work/terraform" "$terraform" providers schema -json)
  time[tf]+="$t "; engine[tf]+="$e "; provider[tf]+="$p "
  rm -rf "$work/cache"
  read -r t e p < <(CHOUDOUFU_CACHE_DIR=$work/cache run "$work/choudoufu" "$choudoufu" providers schema -json)
  time[cold]+="$t "; engine[cold]+="$e "; provider[cold]+="$p "
  read -r t e p < <(CHOUDOUFU_CACHE_DIR=$work/cache run "$work/choudoufu" "$choudoufu" providers schema -json)
  time[cached]+="$t "; engine[cached]+="$e "; provider[cached]+="$p "
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
tf_t=$(echo "${time[tf]}" | median)
echo "| | seconds (median of $runs) | ratio to terraform | engine peak RSS MB | provider peak RSS MB |"
echo "|---|---|---|---|---|"
for k in tf cold cached; do
  t=$(echo "${time[$k]}" | median)
  e=$(echo "${engine[$k]}" | median)
  p=$(echo "${provider[$k]}" | median)
  label=$([[ $k == tf ]] && echo "terraform $("$terraform" version -json | python3 -c 'import json,sys; print(json.load(sys.stdin)["terraform_version"])')" || echo "choudoufu $k")
  printf '| %s | %.2f | %.2fx | %d | %s |\n' "$label" "$t" "$(echo "$t / $tf_t" | bc -l)" $((e / 1024)) "$([[ $p -gt 0 ]] && echo $((p / 1024)) || echo "none started")"
done
