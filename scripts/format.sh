#!/usr/bin/env bash
# Formats the C++ and CUDA sources tracked by git with clang-format and the
# repository's .clang-format (Google style, 120 columns).
#
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   change nothing; list the files that are not
#                               formatted and exit 1 if there is one (CI)
#
# CLANG_FORMAT names the binary (default: clang-format, Debian's package of
# that name). Different clang-format releases can format the same code
# differently: CI uses the one setup.sh installs from Debian.
set -euo pipefail
cd "$(dirname "$0")/.."
cf=${CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null || { echo "format: $cf not found (apt-get install clang-format, or ./setup.sh)" >&2; exit 2; }
mapfile -d '' files < <(git ls-files -z -- '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh')
if [ "${1:-}" = --check ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$cf" --style=file "$f" | cmp -s - "$f"; then echo "format: $f is not formatted (scripts/format.sh)"; bad=1; fi
  done
  if [ $bad = 0 ]; then echo "format: ${#files[@]} files formatted ($("$cf" --version))"; fi
  exit $bad
fi
[ $# -eq 0 ] || { sed -n '2,12p' "$0"; exit 2; }
printf '%s\0' "${files[@]}" | xargs -0 -n 50 "$cf" --style=file -i
