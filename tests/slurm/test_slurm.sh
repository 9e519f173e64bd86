#!/bin/bash
# slurm.*: scripts/slurm-sweep.sh and the srun calibration recipe through a
# real one-machine Slurm (scripts/slurm-local.sh: munged, slurmctld, slurmd).
#
#   test_slurm.sh sweep     GRADWIRE SOURCE_DIR
#   test_slurm.sh calibrate GRADWIRE GRADWIRE_CALIBRATE SOURCE_DIR
#
# sweep: a 3-task job array of slurm-sweep.sh over an 8-point sweep, then
# `gradwire merge`; the merged file must equal a one-process sweep byte for
# byte. calibrate: `srun -n 4 --mpi=pmix gradwire-calibrate --mpi --device
# cpu --quick` (docs/calibrate.md's recipe, on the CPU); the profile must come
# from 4 ranks and `gradwire simulate` must load it.
# Exit 77 (skipped) when Slurm or munge is not installed.
set -euo pipefail
what=${1:?usage: test_slurm.sh sweep|calibrate ...}
shift
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gw-slurm-$what.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$WORK"/cluster/*.log "$WORK"/*.log; do [[ -f $f ]] && { echo "--- $f" >&2; tail -20 "$f" >&2; }; done; exit 1; }

case $what in
  sweep)
    GRADWIRE=$1 SRC=$2
    SWEEP=$SRC/tests/hardening/data/small.sweep.yaml
    export GRADWIRE
    rc=0
    "$SRC/scripts/slurm-local.sh" "$WORK/cluster" \
      sbatch --wait --array=0-2 --cpus-per-task=1 --chdir="$WORK" --output="$WORK/task-%a.log" \
      "$SRC/scripts/slurm-sweep.sh" "$SWEEP" || rc=$?
    [[ $rc -eq 77 ]] && exit 77
    [[ $rc -eq 0 ]] || fail "the job array failed (exit $rc)"
    for i in 0 1 2; do [[ -s $WORK/small.sweep.shard-$i.jsonl ]] || fail "no shard $i"; done
    "$GRADWIRE" merge "$WORK/merged.jsonl" "$WORK"/small.sweep.shard-*.jsonl || fail "merge failed"
    "$GRADWIRE" sweep "$SWEEP" -j 1 --progress none --out "$WORK/whole.jsonl" || fail "one-process sweep failed"
    [[ $(wc -l < "$WORK/whole.jsonl") -eq 8 ]] || fail "the one-process sweep has not 8 records"
    cmp "$WORK/merged.jsonl" "$WORK/whole.jsonl" || fail "merged shards differ from the one-process sweep"
    echo "slurm sweep: 3 array tasks merged = one-process sweep (8 records, byte for byte)"
    ;;
  calibrate)
    GRADWIRE=$1 CALIBRATE=$2 SRC=$3
    # Under the sanitizer stage: Open MPI's own allocations are not ours to
    # report (as tests/common/run_util.hpp's mpi_child_env does for mpirun).
    if [[ -n ${ASAN_OPTIONS:-} ]]; then export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"; fi
    rc=0
    (cd "$WORK" && "$SRC/scripts/slurm-local.sh" "$WORK/cluster" \
      srun -n 4 --overcommit --mpi=pmix "$CALIBRATE" --device cpu --mpi --quick --out "$WORK/p.yaml" \
      > "$WORK/srun.log" 2>&1) || rc=$?
    [[ $rc -eq 77 ]] && exit 77
    [[ $rc -eq 0 ]] || fail "srun calibration failed (exit $rc)"
    grep -q "over 4 MPI ranks" "$WORK/srun.log" || fail "the profile is not from 4 ranks"
    grep -q -- "--mpi" "$WORK/p.yaml" || fail "the profile does not record its --mpi command"
    "$GRADWIRE" simulate "$SRC/scenarios/default.yaml" --profile "$WORK/p.yaml" > "$WORK/sim.log" 2>&1 \
      || fail "simulate does not load the srun profile"
    echo "slurm calibrate: srun -n 4 --mpi=pmix profile loads in simulate"
    ;;
  *) echo "unknown: $what" >&2; exit 2 ;;
esac
