#!/usr/bin/env bash
# Runs the whole gradwire test suite (after making sure everything is
# installed and built, through setup.sh --no-run).
#
#   ./test.sh                 all tests
#   ./test.sh -R PATTERN      only the tests matching PATTERN (ctest -R)
#   ./test.sh --with-torch    make the PyTorch environment first (setup.sh
#                             --with-torch), so the torch.* tests are registered
#                             and run; without it they are registered only when
#                             .venv-torch/ already exists
set -euo pipefail
cd "$(dirname "$0")"
BUILD_DIR=${BUILD_DIR:-build}
setup_args=(--no-run)
if [ "${1:-}" = --with-torch ]; then
  setup_args+=(--with-torch)
  shift
fi
./setup.sh "${setup_args[@]}"
cd "$BUILD_DIR"
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 600 "$@"
