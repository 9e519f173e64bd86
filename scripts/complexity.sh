#!/usr/bin/env bash
# Lists every function in sim/ and calibrate/ longer than 80 lines or with a
# cyclomatic complexity above 25 (lizard, from PyPI), and exits 1 if there is
# one. Issue 12's rule: none may remain.
#
#   scripts/complexity.sh [PATH...]     (default: sim calibrate)
#
# lizard is installed into .venv-tools/ on first use (VENV overrides the path).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-.venv-tools}
if [ ! -x "$venv/bin/lizard" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'lizard==1.24.3'
fi
paths=("$@")
((${#paths[@]})) || paths=(sim calibrate)
# -L: the longest a function may be (lines); -C: its largest cyclomatic complexity.
if "$venv/bin/lizard" -l cpp -L 80 -C 25 -w "${paths[@]}"; then
  echo "complexity: no function in ${paths[*]} is longer than 80 lines or above complexity 25"
else
  echo "complexity: the functions above break the rule (80 lines, complexity 25)" >&2
  exit 1
fi
