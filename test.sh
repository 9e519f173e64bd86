#!/usr/bin/env bash
# Runs the whole gradwire test suite (after making sure everything is
# installed and built, through setup.sh --no-run).
#
#   ./test.sh                 all tests
#   ./test.sh -R PATTERN      only the tests matching PATTERN (ctest -R)
set -euo pipefail
cd "$(dirname "$0")"
BUILD_DIR=${BUILD_DIR:-build}
./setup.sh --no-run
cd "$BUILD_DIR"
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 600 "$@"
