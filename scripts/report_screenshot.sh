#!/bin/bash
# report_screenshot.sh REPORT_DIR OUT.png [WIDTH HEIGHT]
# Renders REPORT_DIR/index.html (made by `gradwire report`) in headless
# Chromium into OUT.png (default 1200 x 3000 pixels), the way a person sees
# it. Exit 77 when Chromium is missing (./setup.sh installs it).
set -euo pipefail
DIR=${1:?usage: report_screenshot.sh REPORT_DIR OUT.png [WIDTH HEIGHT]}
OUT=${2:?usage: report_screenshot.sh REPORT_DIR OUT.png [WIDTH HEIGHT]}
W=${3:-1200}
H=${4:-3000}
CHROMIUM=
for c in chromium chromium-browser google-chrome; do
  if command -v "$c" >/dev/null 2>&1; then CHROMIUM=$c; break; fi
done
[[ -n $CHROMIUM ]] || { echo "report_screenshot.sh: no chromium (./setup.sh installs it)" >&2; exit 77; }
[[ -f $DIR/index.html ]] || { echo "report_screenshot.sh: $DIR/index.html not found" >&2; exit 2; }
PAGE="file://$(cd "$DIR" && pwd)/index.html"
OUT_ABS="$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")"
PROFILE=$(mktemp -d "${TMPDIR:-/tmp}/gw-chromium.XXXXXX")
trap 'rm -rf "$PROFILE"' EXIT
# --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
  --user-data-dir="$PROFILE" --window-size="$W,$H" --screenshot="$OUT_ABS" "$PAGE" > "$PROFILE/log" 2>&1 \
  || { cat "$PROFILE/log" >&2; exit 1; }
[[ -s $OUT_ABS ]] || { echo "report_screenshot.sh: no screenshot written" >&2; cat "$PROFILE/log" >&2; exit 1; }
