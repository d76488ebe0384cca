#!/usr/bin/env bash
# Times `validate` on a generated root of N resources (default 1000) that
# uses variables, locals, count, for_each and references across four aws
# types: stock terraform (after init) against choudoufu (schema cache warm),
# in one run, with peak memory. Prints a Markdown table for BENCHMARKS.md.
#
# Finds terraform on PATH or through TERRAFORM, and the provider mirror in
# CHOUDOUFU_BENCH_MIRROR or live/aws-lane.toml's provider_mirrors.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
size=${SIZE:-1000}
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
choudoufu=$(realpath "${CARGO_TARGET_DIR:-target}/release/choudoufu")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'provider_installation {\n  filesystem_mirror {\n    path = "%s"\n  }\n}\n' "$mirror" > "$work/cli.tfrc"
mkdir -p "$work/root"
# Groups of four resources: a queue (count 2), its policy, a parameter
# naming it (for_each over 2 keys counts as one block) and a bucket.
python3 - "$work/root" "$version" "$size" <<'PY'
import sys
root, version, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = [f'''terraform {{
  required_providers {{
    aws = {{ source = "hashicorp/aws", version = "{version}" }}
  }}
}}

provider "aws" {{
  region = var.region
}}

variable "region" {{
  type    = string
  default = "us-east-1"
}}

variable "env" {{
  type    = string
  default = "bench"
}}

locals {{
  tags   = {{ env = var.env, owner = "bench" }}
  shards = toset(["a", "b"])
}}
''']
for g in range(size // 4):
    out.append(f'''
resource "aws_sqs_queue" "q{g}" {{
  count = 2
  name  = "${{var.env}}-q{g}-${{count.index}}"
  tags  = local.tags
}}

resource "aws_sqs_queue_policy" "p{g}" {{
  queue_url = aws_sqs_queue.q{g}[0].url
  policy = jsonencode({{
    Version   = "2012-10-17"
    Statement = [{{ Effect = "Allow", Principal = "*", Action = "sqs:SendMessage", Resource = aws_sqs_queue.q{g}[0].arn }}]
  }})
}}

resource "aws_ssm_parameter" "s{g}" {{
  for_each = local.shards
  name     = "/${{var.env}}/{g}/${{each.key}}"
  type     = "String"
  value    = aws_sqs_queue.q{g}[1].url
}}

resource "aws_s3_bucket" "b{g}" {{
  bucket = "${{var.env}}-bucket-{g}"
  tags   = merge(local.tags, {{ queue = aws_sqs_queue.q{g}[0].name }})
}}
''')
open(f"{root}/main.tf", "w").write("".join(out))
PY
export TF_CLI_CONFIG_FILE=$work/cli.tfrc CHECKPOINT_DISABLE=1 CHOUDOUFU_CACHE_DIR=$work/cache
(cd "$work/root" && "$terraform" init -input=false -backend=false >/dev/null)
# Warm the schema cache once; validate is measured with it warm.
(cd "$work/root" && "$choudoufu" validate >/dev/null)

# run CMD...: prints "seconds engine_peak_kb", failing if CMD fails.
run() {
  local start end pid hwm=0 h
  start=$(date +%s.%N)
  (cd "$work/root" && exec "$@" >/dev/null) &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    h=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [[ -n $h && $h -gt $hwm ]] && hwm=$h
    sleep 0.05
  done
  wait "$pid"
  end=$(date +%s.%N)
  echo "$(echo "$end - $start" | bc) $hwm"
}

declare -A time mem
for ((i = 0; i < runs; i++)); do
  read -r t m < <(run "$terraform" validate)
  time[tf]+="$t "; mem[tf]+="$m "
  read -r t m < <(run "$choudoufu" validate)
  time[ours]+="$t "; mem[ours]+="$m "
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
tf_t=$(echo "${time[tf]}" | median)
blocks=$(grep -c '^resource ' "$work/root/main.tf")
echo "root: $blocks resource blocks, $((size / 4 * 6)) instances once expanded"
echo
echo "| | seconds (median of $runs) | ratio to terraform | peak RSS MB |"
echo "|---|---|---|---|"
for k in tf ours; do
  t=$(echo "${time[$k]}" | median)
  m=$(echo "${mem[$k]}" | median)
  label=$([[ $k == tf ]] && echo "terraform validate" || echo "choudoufu validate")
  printf '| %s | %.2f | %.2fx | %d |\n' "$label" "$t" "$(echo "$t / $tf_t" | bc -l)" "$((m / 1024))"
done
