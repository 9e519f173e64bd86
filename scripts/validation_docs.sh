#!/usr/bin/env bash
# Regenerates the generated parts of docs/validation.md in place, each
# between its begin/end markers: the collective tables (`gradwire validate
# collectives --format markdown`) and the iteration tables (`gradwire
# validate iterations --format markdown`), and validation/residuals.yaml
# (`gradwire validate iterations --format residuals`, the band's model
# residuals). tests/validate checks that the committed files are the
# commands' output.
#
#   scripts/validation_docs.sh [GRADWIRE]     (default: build/bin/gradwire)
set -euo pipefail
cd "$(dirname "$0")/.."
gw=${1:-build/bin/gradwire}
doc=docs/validation.md
tables=$(mktemp)
trap 'rm -f "$tables"' EXIT
# regenerate KIND END: the output of `validate KIND` between KIND's begin marker and END
regenerate() {
  "$gw" validate "$1" --format markdown >"$tables"
  python3 - "$doc" "$tables" "<!-- begin: gradwire validate $1 --format markdown -->" "$2" <<'PY'
import sys
doc, tables, begin, end = sys.argv[1:]
text = open(doc).read()
a = text.index(begin) + len(begin) + 1
b = text.index(end, a)
open(doc, 'w').write(text[:a] + open(tables).read() + text[b:])
PY
}
regenerate collectives '<!-- end -->'
regenerate iterations '<!-- end: iterations -->'
echo "validation_docs: $doc updated"
# The band's model residuals (docs/model.md, "The band"), from the same cases.
"$gw" validate iterations --format residuals >"$tables"
cp "$tables" validation/residuals.yaml
echo "validation_docs: validation/residuals.yaml updated"
