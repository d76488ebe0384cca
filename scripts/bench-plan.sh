#!/usr/bin/env bash
# Plan from nothing against stock terraform's refresh plan, on generated
# estates of SIZES objects (default "15 100 500"; "100 500" for the mixed
# shape). SHAPE=simple (the default) is SSM parameters and S3 buckets;
# SHAPE=mixed is a network-shaped estate of fourteen types (a VPC and its
# gateway, subnets, route tables, routes and associations, security groups
# and their rules, parameters, buckets, log groups, topics, tables, roles):
# wall time, and the
# requests the emulator served during each plan (read from moto's request
# log). Stock terraform applies each estate, choudoufu migrates it, and then
# both plan the unchanged estate: terraform from its state with a refresh,
# choudoufu from the live system alone, with and without its record store
# (SSM parameters in the same moto, read ten to a page: the table says how
# many parameters the store holds and how many pages a plan reads),
# RUNS times (default 3) taking turns, so that load on the machine falls on
# all three alike; the figures are each plan's medians.
# Prints a Markdown table for BENCHMARKS.md and writes the same figures as
# an evidence page, reports/plan-from-nothing.md (PAGE= to put it elsewhere),
# naming the commit, the date, the versions and the command, and as
# reports/plan-from-nothing.json beside it, which `gauntlet site` reads.
#
# BUILD=debug measures the debug build instead of the release one (the
# suite does, to prove the script without a release build); pages name the
# build they measured. CHOUDOUFU names a binary of that build to measure
# instead of building one.
#
# Needs the virtualenv `cargo run -p gauntlet -- provision` makes (moto),
# terraform on PATH or in TERRAFORM, and the provider mirror in
# CHOUDOUFU_BENCH_MIRROR or live/aws-lane.toml's provider_mirrors.
set -euo pipefail
cd "$(dirname "$0")/.."
shape=${SHAPE:-simple}
case $shape in
  simple) sizes=${SIZES:-"15 100 500"}; page=${PAGE:-reports/plan-from-nothing.md} ;;
  mixed) sizes=${SIZES:-"100 500"}; page=${PAGE:-reports/plan-from-nothing-mixed.md} ;;
  *) echo "SHAPE is simple or mixed, not $shape" >&2; exit 2 ;;
esac
terraform=${TERRAFORM:-terraform}
runs=${RUNS:-3}
# moto's server through the gauntlet's launcher, which answers one request
# at a time (moto's backends are not safe under concurrent requests).
python=$PWD/.venv/bin/python
[[ -x $PWD/.venv/bin/moto_server ]] || { echo "no moto in .venv: run cargo run -p gauntlet -- provision" >&2; exit 2; }

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

build=${BUILD:-release}
case $build in
  release | debug) ;;
  *) echo "BUILD is release or debug, not $build" >&2; exit 2 ;;
esac
if [[ -n ${CHOUDOUFU:-} ]]; then
  # A binary built already, of the BUILD profile (the suite's, which a
  # build of its own here would replace under the tests running it).
  choudoufu=$(realpath "$CHOUDOUFU")
else
  if [[ $build == release ]]; then
    cargo build --quiet --release -p engine --bin choudoufu
  else
    cargo build --quiet -p engine --bin choudoufu
  fi
  choudoufu=$(realpath "${CARGO_TARGET_DIR:-target}/$build/choudoufu")
fi

work=$(mktemp -d)
moto_pid=
cleanup() { [[ -n $moto_pid ]] && kill "$moto_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
printf 'provider_installation {\n  filesystem_mirror {\n    path = "%s"\n  }\n}\n' "$mirror" > "$work/cli.tfrc"
export TF_CLI_CONFIG_FILE=$work/cli.tfrc CHECKPOINT_DISABLE=1 CHOUDOUFU_CACHE_DIR=$work/cache

# requests LOG: how many requests moto has logged so far.
requests() { grep -c '" [0-9][0-9][0-9] ' "$1" || true; }

# timed LOG CMD...: prints "seconds requests" for one run of CMD.
timed() {
  local log=$1; shift
  local before after start end
  before=$(requests "$log")
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  after=$(requests "$log")
  echo "$(echo "$end - $start" | bc) $((after - before))"
}

started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
table=$work/table.md
{
  echo "| objects | terraform plan (refresh) s | requests | choudoufu plan s | requests | ratio | record store: parameters, pages | choudoufu plan -no-records s | requests |"
  echo "|---|---|---|---|---|---|---|---|---|"
} | tee "$table"
for n in $sizes; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  log=$work/moto-$n.log
  "$python" -c "$(cat gauntlet/src/moto_server.py)" -H 127.0.0.1 -p "$port" > "$log" 2>&1 &
  moto_pid=$!
  until curl -fs "http://127.0.0.1:$port/moto-api/" >/dev/null 2>&1; do sleep 0.2; done
  root=$work/root-$n
  mkdir -p "$root"
  {
    cat <<TF
terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = "$version" }
  }
}

provider "aws" {
  region                      = "us-east-1"
  access_key                  = "test"
  secret_key                  = "test"
  skip_credentials_validation = true
  skip_metadata_api_check     = true
  skip_requesting_account_id  = true
  s3_use_path_style           = true
  endpoints {
TF
    for svc in dynamodb ec2 iam logs resourcegroupstaggingapi s3 sns ssm sts; do
      printf '    %-24s = "http://127.0.0.1:%s"\n' "$svc" "$port"
    done
    printf '  }\n}\n\n'
    if [[ $shape == simple ]]; then
      # Objects: SSM parameters and tagged buckets, 4 to 1.
      params=$(( n * 4 / 5 )); buckets=$(( n - params ))
      cat <<TF
resource "aws_ssm_parameter" "p" {
  count = $params
  name  = "/bench/p/\${count.index}"
  type  = "String"
  value = "v\${count.index}"
}

resource "aws_s3_bucket" "b" {
  count  = $buckets
  bucket = "bench-\${count.index}"
}
TF
    else
      # Objects: one VPC and its internet gateway, then units of twelve
      # (a subnet with its route table, route and association, a security
      # group with an ingress and an egress rule, a parameter, a bucket, a
      # log group, a topic and a table), and a role for every tenth unit.
      units=$(( (n - 2) * 10 / 121 ))
      roles=$(( n - 2 - units * 12 ))
      cat <<TF
resource "aws_vpc" "main" {
  cidr_block = "10.0.0.0/16"
}

resource "aws_internet_gateway" "main" {
  vpc_id = aws_vpc.main.id
}

resource "aws_subnet" "s" {
  count      = $units
  vpc_id     = aws_vpc.main.id
  cidr_block = cidrsubnet("10.0.0.0/16", 8, count.index)
}

resource "aws_route_table" "r" {
  count  = $units
  vpc_id = aws_vpc.main.id
}

resource "aws_route" "out" {
  count                  = $units
  route_table_id         = aws_route_table.r[count.index].id
  destination_cidr_block = "0.0.0.0/0"
  gateway_id             = aws_internet_gateway.main.id
}

resource "aws_route_table_association" "a" {
  count          = $units
  subnet_id      = aws_subnet.s[count.index].id
  route_table_id = aws_route_table.r[count.index].id
}

resource "aws_security_group" "g" {
  count  = $units
  name   = "bench-\${count.index}"
  vpc_id = aws_vpc.main.id
}

resource "aws_vpc_security_group_ingress_rule" "in" {
  count             = $units
  security_group_id = aws_security_group.g[count.index].id
  cidr_ipv4         = "10.0.0.0/8"
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
}

resource "aws_vpc_security_group_egress_rule" "out" {
  count             = $units
  security_group_id = aws_security_group.g[count.index].id
  cidr_ipv4         = "0.0.0.0/0"
  ip_protocol       = "-1"
}

resource "aws_ssm_parameter" "p" {
  count = $units
  name  = "/bench/p/\${count.index}"
  type  = "String"
  value = aws_subnet.s[count.index].id
}

resource "aws_s3_bucket" "b" {
  count  = $units
  bucket = "bench-\${count.index}"
}

resource "aws_cloudwatch_log_group" "l" {
  count = $units
  name  = "/bench/\${count.index}"
}

resource "aws_sns_topic" "t" {
  count = $units
  name  = "bench-\${count.index}"
}

resource "aws_dynamodb_table" "d" {
  count        = $units
  name         = "bench-\${count.index}"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "id"
  attribute {
    name = "id"
    type = "S"
  }
}

resource "aws_iam_role" "role" {
  count = $roles
  name  = "bench-\${count.index}"
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = "sts:AssumeRole", Principal = { Service = "lambda.amazonaws.com" } }]
  })
}
TF
    fi
  } > "$root/main.tf"
  printf 'live {\n  estate = "bench"\n}\n' > "$root/live.hcl"
  (cd "$root" && "$terraform" init -input=false >/dev/null && "$terraform" apply -auto-approve -input=false -parallelism=20 >/dev/null)
  (cd "$root" && "$choudoufu" migrate >/dev/null)
  (cd "$root" && "$choudoufu" plan >/dev/null)  # warm the schema cache
  # The record store's parameters, as the AWS CLI pages through them.
  store=$(AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1 \
    "$PWD/.venv/bin/aws" --endpoint-url "http://127.0.0.1:$port" ssm get-parameters-by-path \
    --path /choudoufu/records/bench --recursive --query 'Parameters[].Name' --output json \
    | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
  pages=$(( (store + 9) / 10 )); (( pages > 0 )) || pages=1
  : > "$work/samples"
  for ((i = 0; i < runs; i++)); do
    {
      (cd "$root" && timed "$log" "$terraform" plan -input=false -lock=false)
      (cd "$root" && timed "$log" "$choudoufu" plan)
      (cd "$root" && timed "$log" "$choudoufu" plan -no-records)
    } | paste -s -d' ' >> "$work/samples"
  done
  read -r tf_t tf_r ch_t ch_r nr_t nr_r < <(python3 - "$work/samples" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
print(*(statistics.median(float(r[c]) for r in rows) for c in range(6)))
PY
)
  tf_r=${tf_r%.*}; ch_r=${ch_r%.*}; nr_r=${nr_r%.*}
  printf '| %d | %.2f | %d | %.2f | %d | %.2fx | %d, %d | %.2f | %d |\n' "$n" "$tf_t" "$tf_r" "$ch_t" "$ch_r" "$(echo "$ch_t / $tf_t" | bc -l)" "$store" "$pages" "$nr_t" "$nr_r" | tee -a "$table"
  printf '%d %s %d %s %d %s %d %d %d\n' "$n" "$tf_t" "$tf_r" "$ch_t" "$ch_r" "$nr_t" "$nr_r" "$store" "$pages" >> "$work/rows"
  kill "$moto_pid"; wait "$moto_pid" 2>/dev/null || true; moto_pid=
done

commit=$(git rev-parse --short=10 HEAD)
dirty=$(git status --porcelain --untracked-files=no -- . ':(exclude)reports' | grep -q . && echo " (with uncommitted changes)" || true)
tf_version=$("$terraform" version | head -1)
moto_version=$("$PWD/.venv/bin/python" -c 'import moto; print(moto.__version__)')
command="SHAPE=$shape SIZES=\"$sizes\" RUNS=$runs${BUILD:+ BUILD=$build} scripts/bench-plan.sh"
sizes_text=$(python3 -c 'import sys; s = sys.argv[1:]; print(", ".join(s[:-1]) + " and " + s[-1] if len(s) > 1 else s[0])' $sizes)
mkdir -p "$(dirname "$page")"
{
  echo "# Evidence · plan from nothing, against stock's refresh plan"
  echo
  if [[ $shape == simple ]]; then
    echo "Generated estates of $sizes_text objects (SSM parameters and S3"
    echo "buckets, four to one) are applied by stock terraform and migrated by"
  else
    echo "Generated network-shaped estates of $sizes_text objects over fourteen"
    echo "types (a VPC and its internet gateway; per unit a subnet, a route table,"
    echo "a route and an association, a security group with an ingress and an"
    echo "egress rule, an SSM parameter, an S3 bucket, a log group, an SNS topic"
    echo "and a DynamoDB table; an IAM role for every tenth unit) are applied by"
    echo "stock terraform and migrated by"
  fi
  echo "choudoufu on one moto server each. Then, with nothing changed, stock"
  echo "terraform plans from its state with a refresh, and choudoufu plans from the"
  echo "live system alone: with its record store, then with \`-no-records\`. The"
  echo "wall time of each plan is measured around the process; the requests are"
  echo "the lines moto's request log gained during that plan. The three plans take"
  echo "turns $runs times and each figure is the median of its runs."
  echo
  goal=1.0; [[ $shape == mixed ]] && goal=0.7
  echo "Goal: wall time at most ${goal}x stock's refresh plan; requests at most stock's"
  echo "plus one listing per swept type (the tagging API's pages, 100 objects a"
  echo "page; the six listings by the estate's tag every plan makes; with"
  echo "\`-no-records\`, the IAM role, user and policy listings) and the record"
  echo "store's pages (ten SSM parameters a page, read once per command:"
  echo "\`-no-records\` reads them too and plans without them)."
  echo
  cat "$table"
  echo
  echo "Last run at commit $commit$dirty, started $started, $build build, on $(nproc) cores; $tf_version, hashicorp/aws $version, moto $moto_version."
  echo
  echo "## Reproduce it"
  echo
  echo '```'
  echo "$command"
  echo '```'
  echo
  echo "Needs the virtualenv \`cargo run -p gauntlet -- provision\` makes (moto), stock terraform on PATH or in TERRAFORM, and the aws provider in CHOUDOUFU_BENCH_MIRROR or a mirror \`live/aws-lane.toml\` names. It builds choudoufu itself (release mode unless BUILD=debug). No BREAK toggle applies: these are measurements, not assertions."
} > "$page"
json=${page%.md}.json
BUILD=$build COMMIT="$commit$dirty" STARTED=$started CORES=$(nproc) TF_VERSION=$tf_version PROVIDER=$version MOTO=$moto_version COMMAND=$command \
  python3 - "$work/rows" > "$json" <<'PY'
import json, os, sys
rows = []
for line in open(sys.argv[1]):
    n, tf_t, tf_r, ch_t, ch_r, nr_t, nr_r, store, pages = line.split()
    rows.append({
        "objects": int(n),
        "terraform_s": round(float(tf_t), 2), "terraform_requests": int(tf_r),
        "choudoufu_s": round(float(ch_t), 2), "choudoufu_requests": int(ch_r),
        "no_records_s": round(float(nr_t), 2), "no_records_requests": int(nr_r),
        "store_parameters": int(store), "store_pages": int(pages),
    })
e = os.environ
print(json.dumps({
    "started_at": e["STARTED"], "commit": e["COMMIT"], "build": e["BUILD"],
    "cores": int(e["CORES"]), "terraform": e["TF_VERSION"], "aws_provider": e["PROVIDER"],
    "emulator": e["MOTO"], "command": e["COMMAND"], "rows": rows,
}, indent=2))
PY
echo "wrote $page and $json" >&2
