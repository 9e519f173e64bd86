#!/usr/bin/env bash
# Compares what two builds of gradwire write for every bundled scenario and
# study: `simulate` (table, json, csv, trace), `collective` (every op and
# algorithm), `check`, `sweep` results (both evaluators), `plan`, `report`
# data files, and the one-line errors of a set of bad inputs. A refactor that
# claims "behaviour unchanged" must leave this script silent.
#
#   scripts/compare_builds.sh OLD_GRADWIRE NEW_GRADWIRE
#
# OLD_GRADWIRE and NEW_GRADWIRE are gradwire executables (e.g. a build of the
# commit before the change, and build/bin/gradwire). Both runs use the same
# paths (a work folder reused in turn), so file names inside outputs compare
# equal. Exit 0 when every output is byte-identical, 1 otherwise (the
# differences are listed). `calibrate` is left out: it times the machine it
# runs on, so two runs differ even with one build; so are the sweep summary's
# elapsed time and the clock-driven progress lines of a long validation.
# Environment: KEEP=1 keeps the work folder; JOBS sets sweep workers (default 2).
set -euo pipefail
if [ $# -ne 2 ]; then sed -n '2,16p' "$0"; exit 2; fi
old=$(realpath "$1"); new=$(realpath "$2")
for b in "$old" "$new"; do [ -x "$b" ] || { echo "compare_builds: $b is not an executable" >&2; exit 2; }; done
cd "$(dirname "$0")/.."
jobs=${JOBS:-2}
work=$(mktemp -d /tmp/gw-compare.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

# run_all BIN DEST: every command, outputs under DEST, stdout/stderr/exit code
# of each command in DEST/NAME.{out,err,rc}.
run_all() {
  local gw=$1 dest=$2 o
  mkdir -p "$dest"
  o="$dest"
  cmd() {  # cmd NAME ARGS...: runs gradwire with ARGS, keeps its stdout, stderr and exit code
    local name=$1; shift
    set +e
    "$gw" "$@" >"$o/$name.out" 2>"$o/$name.err"
    echo $? >"$o/$name.rc"
    set -e
  }
  local s n
  for s in scenarios/*.yaml; do
    n=$(basename "$s" .yaml)
    case "$n" in study-*) continue ;; esac
    cmd "simulate-$n-table" simulate "$s"
    cmd "simulate-$n-json" simulate "$s" --format json --trace "$o/trace-$n.json"
    cmd "simulate-$n-csv" simulate "$s" --format csv
    cmd "simulate-$n-h200m" simulate "$s" --profile calibrate/profiles/h200-measured.yaml --format json
  done
  local op algo
  for op in allreduce allgather reducescatter broadcast alltoall; do
    for algo in ring tree hierarchical direct; do
      cmd "collective-$op-$algo" collective --scenario scenarios/default.yaml --op "$op" --algo "$algo" --sizes 8B:256MiB
      cmd "collective-$op-$algo-json" collective --scenario scenarios/resnet50-8xa100.yaml --op "$op" --algo "$algo" \
        --sizes 1KiB:64MiB --format json
    done
  done
  cmd collective-per-step collective --scenario scenarios/default.yaml --granularity per-step --sizes 1KiB:16MiB --format csv
  cmd collective-gpus collective --scenario scenarios/resnet50-8xa100.yaml --gpus 3 --sizes 1MiB:4MiB
  cmd check-all check scenarios/*.yaml
  for s in scenarios/study-*.yaml; do
    n=$(basename "$s" .yaml)
    cmd "sweep-$n" sweep "$s" -j "$jobs" --progress none --out "$o/$n.jsonl"
    cmd "plan-$n" plan "$o/$n.jsonl"
    cmd "plan-$n-deadline" plan "$o/$n.jsonl" --deadline 10h --budget 500
    cmd "plan-$n-spot" plan "$o/$n.jsonl" --deadline 100h --spot
    cmd "report-$n" report "$o/$n.jsonl" --out "$o/report-$n"
    rm -f "$o/report-$n"/*.png "$o/report-$n"/*.svg  # gnuplot's own renderings (its version, fonts)
  done
  cmd sweep-sim sweep scenarios/study-accumulation.yaml -j "$jobs" --progress none --evaluator simulation \
    --shard 0/4 --out "$o/acc-sim.jsonl"
  cmd plan-sim plan "$o/acc-sim.jsonl"
  # Bad input: the one-line message and exit code 2.
  local bad
  for bad in tests/scenarios/bad/*.yaml; do
    cmd "bad-$(basename "$bad" .yaml)" check "$bad"
  done
  for bad in tests/calibrate/bad/*.yaml; do
    cmd "bad-profile-$(basename "$bad" .yaml)" simulate scenarios/default.yaml --profile "$bad"
  done
  # The sweep's summary line says how long it took, and a long validation
  # prints a progress line every 2 s: the figures that depend on the clock.
  sed -i -E 's/ in [0-9.e+-]+ s -> / in (time) s -> /' "$o"/sweep-*.err
  sed -i -E '/: validated ([0-9]+ of [0-9]+|all [0-9]+) points$/d' "$o"/*.err
}

for side in old new; do
  gw=$old; [ $side = new ] && gw=$new
  rm -rf "$work/run"
  run_all "$gw" "$work/run"
  mv "$work/run" "$work/$side"
done

if diff -r "$work/old" "$work/new" >"$work/diff.txt"; then
  echo "compare_builds: $(find "$work/new" -type f | wc -l) outputs byte-identical"
  exit 0
fi
echo "compare_builds: outputs differ:" >&2
head -n 200 "$work/diff.txt" >&2
exit 1
