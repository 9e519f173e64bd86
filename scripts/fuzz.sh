#!/usr/bin/env bash
# Builds the libFuzzer targets of every gradwire loader (the "fuzz" CMake
# preset: clang, ASan + UBSan, -DGRADWIRE_FUZZ=ON) and runs each for a bounded
# time from a seed corpus of the bundled and malformed files. See
# docs/hardening.md.
#
#   scripts/fuzz.sh                  all targets, FUZZ_SECONDS each
#   scripts/fuzz.sh scenario sweep   only these targets
#
# Environment:
#   FUZZ_SECONDS  seconds per target (default 60)
#   FUZZ_JOBS     parallel fuzzing processes per target (default 1)
#   FUZZ_BUILD    build directory (default build-fuzz)
#   JOBS          build parallelism (default: number of cores)
#   FUZZ_WORK     where corpora and crash files go (default $FUZZ_BUILD/fuzz-work)
# A crash, a leak, a timeout (10 s per input) or an out-of-memory (2 GiB)
# leaves its input under $FUZZ_WORK/<target>/ and makes the script exit 1.
# Keep each such input, once fixed, in tests/fuzz/regressions/<target>/: the
# normal test suite replays them (test_fuzz_regressions).
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_JOBS=${FUZZ_JOBS:-1}
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
JOBS=${JOBS:-$(nproc)}
FUZZ_WORK=${FUZZ_WORK:-$FUZZ_BUILD/fuzz-work}
all_targets=(scenario model profile catalog sweep units results compute nccl_tests)
targets=("$@")
if ((${#targets[@]} == 0)); then targets=("${all_targets[@]}"); fi

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ is needed (Debian: clang-14 and libclang-rt-14-dev)" >&2
  exit 2
fi

cmake --preset fuzz -B "$FUZZ_BUILD" >/dev/null
cmake --build "$FUZZ_BUILD" -j "$JOBS" --target $(printf 'fuzz_%s ' "${targets[@]}")

status=0
for t in "${targets[@]}"; do
  bin="$FUZZ_BUILD/fuzz/fuzz_$t"
  work="$FUZZ_WORK/$t"
  mkdir -p "$work/corpus" "$work/artifacts"
  seeds="$FUZZ_BUILD/tests/fuzz/seeds/$t"
  jobs=()
  if ((FUZZ_JOBS > 1)); then jobs=(-jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS"); fi
  dict=()
  if [ -f "tests/fuzz/dicts/$t.dict" ]; then dict=(-dict="tests/fuzz/dicts/$t.dict"); fi
  echo "== fuzz_$t: ${FUZZ_SECONDS}s, seeds $seeds"
  set +e
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$bin" "$work/corpus" "$seeds" "tests/fuzz/regressions/$t" "${dict[@]}" \
      -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
      "${jobs[@]}" -print_final_stats=1 \
      -artifact_prefix="$work/artifacts/" >"$work/log.txt" 2>&1
  rc=$?
  set -e
  grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$work/log.txt" | tail -3 || true
  if ((rc != 0)) || compgen -G "$work/artifacts/*" >/dev/null; then
    echo "fuzz_$t: FAILED (exit $rc); inputs in $work/artifacts/, log $work/log.txt" >&2
    grep -E "ERROR|uncaught|runtime error|SUMMARY" "$work/log.txt" | head -5 >&2 || true
    status=1
  else
    echo "fuzz_$t: ok (corpus $(ls "$work/corpus" | wc -l) inputs)"
  fi
done
exit $status
