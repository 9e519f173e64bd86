#!/bin/bash
# report_screenshot.sh REPORT_DIR OUT.png [WIDTH HEIGHT [SECTION]]
# Renders REPORT_DIR/index.html (made by `gradwire report`) in headless
# Chromium into OUT.png (default 1200 x 3000 pixels), the way a person sees
# it; with SECTION (a figure's name, pareto-front or all-points) the page
# scrolled to that section (through a frame: headless Chromium does not
# scroll to a fragment itself). Exit 77 when Chromium is missing (./setup.sh
# installs it).
set -euo pipefail
DIR=${1:?usage: report_screenshot.sh REPORT_DIR OUT.png [WIDTH HEIGHT [SECTION]]}
OUT=${2:?usage: report_screenshot.sh REPORT_DIR OUT.png [WIDTH HEIGHT [SECTION]]}
W=${3:-1200}
H=${4:-3000}
SECTION=${5:-}
[[ $SECTION =~ ^[a-z0-9-]*$ ]] || { echo "report_screenshot.sh: SECTION is a name of letters, digits and -" >&2; exit 2; }
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
if [[ -n $SECTION ]]; then
  # The page in a frame of the window's size, scrolled to SECTION; the
  # path reaches the frame's HTML percent-encoded, as a URL.
  url=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$(cd "$DIR" && pwd)/index.html")
  printf '<!DOCTYPE html><html><body style="margin:0"><iframe src="file://%s#%s" style="width:%dpx;height:%dpx;border:0"></iframe></body></html>\n' \
    "$url" "$SECTION" "$W" "$H" > "$PROFILE/frame.html"
  PAGE="file://$PROFILE/frame.html"
fi
# --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
# --virtual-time-budget: the figures load before the picture is taken.
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
  --virtual-time-budget=5000 --user-data-dir="$PROFILE" --window-size="$W,$H" --screenshot="$OUT_ABS" "$PAGE" \
  > "$PROFILE/log" 2>&1 || { cat "$PROFILE/log" >&2; exit 1; }
[[ -s $OUT_ABS ]] || { echo "report_screenshot.sh: no screenshot written" >&2; cat "$PROFILE/log" >&2; exit 1; }
