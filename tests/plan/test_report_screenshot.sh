#!/bin/bash
# report.screenshot: a report rendered in headless Chromium shows its figures.
# The page of an 8-point sweep is screenshot with its figures and again made
# without gnuplot (tables alone); the first must have many strongly coloured
# pixels (the plots), the second few, so a page whose figures do not load
# fails. Exit 77 (skipped) without Chromium.
#   test_report_screenshot.sh GRADWIRE SOURCE_DIR
set -euo pipefail
GRADWIRE=$1 SRC=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gw-report-shot.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"$GRADWIRE" sweep "$SRC/tests/hardening/data/small.sweep.yaml" -j 1 --progress none --out "$WORK/r.jsonl" > /dev/null
"$GRADWIRE" report "$WORK/r.jsonl" -o "$WORK/with" > /dev/null
"$GRADWIRE" report "$WORK/r.jsonl" -o "$WORK/without" --gnuplot "$WORK/no-gnuplot" > /dev/null 2>&1
rc=0
"$SRC/scripts/report_screenshot.sh" "$WORK/with" "$WORK/with.png" 1200 2400 || rc=$?
[[ $rc -eq 77 ]] && exit 77
[[ $rc -eq 0 ]] || { echo "FAIL: screenshot failed"; exit 1; }
"$SRC/scripts/report_screenshot.sh" "$WORK/without" "$WORK/without.png" 1200 2400
with=$(python3 "$SRC/tests/plan/png_colour_pixels.py" "$WORK/with.png")
without=$(python3 "$SRC/tests/plan/png_colour_pixels.py" "$WORK/without.png")
echo "strongly coloured pixels: $with with figures, $without without"
(( with >= 4000 )) || { echo "FAIL: the figures do not show ($with coloured pixels)"; exit 1; }
(( without < 2000 )) || { echo "FAIL: the page without figures is as colourful ($without)"; exit 1; }
