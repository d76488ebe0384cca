#!/usr/bin/env bash
# What verifying the provider against the dependency lock file costs a
# plan: `choudoufu plan` of reference-aws-stateful (from nothing, against a
# moto server) in a root initialised by `choudoufu init`, with the
# checksum memo warm and with it cold (the 707 MB binary hashed again);
# and `terraform plan` of the same root, which hashes the package on every
# run. Prints medians of RUNS runs.
#
#   RUNS=5 scripts/bench-lock-verify.sh
#
# Needs a release build (cargo build --release -p engine), the provider
# mirror (CHOUDOUFU_TEST_PLUGIN_MIRROR or /opt/tf-plugins) and the .venv
# the gauntlet provisions.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
ENGINE=${CHOUDOUFU:-$PWD/target/release/choudoufu}
MIRROR=${CHOUDOUFU_TEST_PLUGIN_MIRROR:-/opt/tf-plugins}
TERRAFORM=${TERRAFORM:-terraform}

work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
setsid .venv/bin/python -c "$(cat gauntlet/src/moto_server.py)" -H 127.0.0.1 -p "$port" >/dev/null 2>&1 &
moto=$!
trap 'kill -- -$moto 2>/dev/null; rm -rf "$work"' EXIT
until curl -s "http://127.0.0.1:$port/moto-api/" >/dev/null; do sleep 0.2; done

printf 'provider_installation {\n  filesystem_mirror {\n    path = "%s"\n  }\n}\n' "$MIRROR" >"$work/cli.tfrc"
export TF_CLI_CONFIG_FILE=$work/cli.tfrc CHOUDOUFU_CACHE_DIR=$work/cache TF_IN_AUTOMATION=1
root=$work/root
mkdir "$root"
cp estates/reference-aws-stateful/*.tf estates/reference-aws-stateful/live.hcl "$root/"
{
  printf 'provider "aws" {\n  region = "us-east-1"\n  access_key = "test"\n  secret_key = "test"\n'
  printf '  skip_credentials_validation = true\n  skip_metadata_api_check = true\n  skip_requesting_account_id = true\n  s3_use_path_style = true\n  endpoints {\n'
  for s in dynamodb iam resourcegroupstaggingapi s3 sns sqs ssm sts; do printf '    %s = "http://127.0.0.1:%s"\n' "$s" "$port"; done
  printf '  }\n}\n'
} >"$root/moto_override.tf"
cd "$root"
"$ENGINE" init -no-color >/dev/null
"$ENGINE" plan -no-color >/dev/null # the schema cache and the memo, warm

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_of() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
measure() {
  local label=$1 prepare=$2
  shift 2
  local t
  t=$(for _ in $(seq "$RUNS"); do eval "$prepare"; time_of "$@"; done | median)
  printf '%-44s %6.2f s\n' "$label" "$t"
}
measure "choudoufu plan, lock verified, memo warm" ":" "$ENGINE" plan -no-color
measure "choudoufu plan, lock verified, memo cold" "rm -rf $work/cache/hashes" "$ENGINE" plan -no-color
measure "terraform plan (hashes every run)" ":" "$TERRAFORM" plan -input=false -no-color
