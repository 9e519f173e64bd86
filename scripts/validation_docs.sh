#!/usr/bin/env bash
# Regenerates the tables of docs/validation.md from `gradwire validate
# collectives --format markdown` (between its begin/end markers), in place.
# tests/validate checks that the committed tables are the command's output.
#
#   scripts/validation_docs.sh [GRADWIRE]     (default: build/bin/gradwire)
set -euo pipefail
cd "$(dirname "$0")/.."
gw=${1:-build/bin/gradwire}
doc=docs/validation.md
begin='<!-- begin: gradwire validate collectives --format markdown -->'
end='<!-- end -->'
tables=$(mktemp)
trap 'rm -f "$tables"' EXIT
"$gw" validate collectives --format markdown >"$tables"
python3 - "$doc" "$tables" "$begin" "$end" <<'PY'
import sys
doc, tables, begin, end = sys.argv[1:]
text = open(doc).read()
a = text.index(begin) + len(begin) + 1
b = text.index(end)
open(doc, 'w').write(text[:a] + open(tables).read() + text[b:])
PY
echo "validation_docs: $doc updated"
