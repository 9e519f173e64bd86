#!/usr/bin/env bash
# Scale benchmark (docs/engine.md, "Scale"; prints figures, not a test):
# `gradwire simulate` of the bundled default scenario (ResNet-50, 8 x
# A100-80GB and 4 NICs per node, one switch) with its node count raised to
# N/8, for each N given. One line per size: wall and CPU time (user + sys of
# the whole process tree), the peak resident memory of the largest process
# (the simulation child; /usr/bin/time's maximum) and the estimate gradwire
# printed before it ran (engine::simulation_memory_estimate; "-" below the
# size where it says it).
#
#   scripts/bench_scale.sh [-b GRADWIRE] N...     (default: build/bin/gradwire;
#                                                   131072 524288 1048576)
set -euo pipefail
cd "$(dirname "$0")/.."
gw=build/bin/gradwire
if [[ ${1:-} == -b ]]; then gw=$2; shift 2; fi
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(131072 524288 1048576)
command -v /usr/bin/time >/dev/null || { echo "bench_scale: needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%9s %10s %10s %14s %14s %9s  %s\n' GPUs "wall (s)" "CPU (s)" "max RSS (MB)" "estimate (MB)" load iteration
for n in "${sizes[@]}"; do
  (( n % 8 == 0 )) || { echo "bench_scale: $n is not a multiple of 8" >&2; exit 2; }
  sed "s/^  nodes: 4$/  nodes: $((n / 8))/" scenarios/default.yaml >"$work/s.yaml"
  sed "s|^  model: resnet50$|  model: $PWD/models/resnet50.yaml|" -i "$work/s.yaml"
  load=$(cut -d' ' -f1 /proc/loadavg)
  GRADWIRE_PROGRESS_AFTER=off /usr/bin/time -f '%e %U %S %M' -o "$work/time" \
    "$gw" simulate --format json "$work/s.yaml" >"$work/out.json" 2>"$work/err"
  read -r wall user sys rss <"$work/time"
  est=$(sed -n 's/.*: about \([0-9.]*\) \([KMG]i*B\) of memory.*/\1 \2/p' "$work/err" | head -1)
  case $est in
    *GiB) est=$(awk -v v="${est% *}" 'BEGIN{printf "%.0f", v*1073741824/1e6}') ;;
    *MiB) est=$(awk -v v="${est% *}" 'BEGIN{printf "%.0f", v*1048576/1e6}') ;;
    *) est=- ;;
  esac
  iter=$(python3 -c 'import json,sys; print("%.6f s" % json.load(open(sys.argv[1]))["critical_path"]["total_s"])' \
    "$work/out.json" 2>/dev/null || echo "?")
  printf '%9d %10.1f %10.1f %14.0f %14s %9s  %s\n' "$n" "$wall" "$(echo "$user + $sys" | bc)" \
    "$(echo "$rss / 1000" | bc)" "$est" "$load" "$iter"
done
