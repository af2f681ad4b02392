#!/usr/bin/env bash
# Screenshot every page of the built book with headless Chromium, for a visual check
# (equations rendered, launch buttons present, plots and bibliography visible).
#
# Usage: scripts/screenshot_book.sh [OUT_DIR] [HTML_DIR]
#   OUT_DIR   where the PNGs go            (default: _build/screenshots)
#   HTML_DIR  the built site               (default: _build/html; run `jupyter-book build .` first)
# Environment: CHROMIUM (browser binary; default: chromium, then chromium-browser, google-chrome),
#              WIDTH/HEIGHT (window size; default 1280x2000), WAIT_MS (time for MathJax; default 4000).
#
#
# The site loads MathJax 3 from a CDN, so without network access equations stay as raw TeX.
# Offline, set MATHJAX_LOCAL to a local MathJax 2 (Debian: `apt-get install libjs-mathjax`,
# then MATHJAX_LOCAL=/usr/share/javascript/mathjax/MathJax.js): the pages are then shot from a
# temporary copy of the site whose CDN script tag is swapped for the local MathJax. The built
# site itself is never modified.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${1:-$repo/_build/screenshots}")
html=$(realpath -m "${2:-$repo/_build/html}")
width=${WIDTH:-1280}
height=${HEIGHT:-2000}
wait_ms=${WAIT_MS:-4000}

browser=${CHROMIUM:-}
if [[ -z "$browser" ]]; then
    for b in chromium chromium-browser google-chrome; do
        if command -v "$b" >/dev/null; then browser=$b; break; fi
    done
fi
[[ -n "$browser" ]] || { echo "screenshot_book: no chromium found (apt-get install chromium)" >&2; exit 1; }
[[ -d "$html" ]] || { echo "screenshot_book: $html not found; build the book first" >&2; exit 1; }
mkdir -p "$out"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
profile="$tmp/profile"

if [[ -n "${MATHJAX_LOCAL:-}" ]]; then
    [[ -f "$MATHJAX_LOCAL" ]] || { echo "screenshot_book: $MATHJAX_LOCAL not found" >&2; exit 1; }
    cp -r "$html" "$tmp/site"
    html="$tmp/site"
    # MathJax 2 equivalent of the MathJax 3 set-up that Sphinx/MyST write into every page:
    # typeset the elements of class "math" even inside sections marked mathjax_ignore.
    mj2_config='<script type="text/x-mathjax-config">MathJax.Hub.Config({tex2jax: {processClass: "math|output_area", ignoreClass: "tex2jax_ignore|mathjax_ignore"}});</script>'
    mj2_script="<script src=\"file://$MATHJAX_LOCAL?config=TeX-AMS-MML_SVG\"></script>"
    find "$html" -name '*.html' -exec sed -i \
        -e "s~<script>window.MathJax = .*</script>~${mj2_config}~" \
        -e "s~<script[^>]*src=\"https://cdn.jsdelivr.net/npm/mathjax@3[^\"]*\"></script>~${mj2_script}~" {} +
fi

count=0
while IFS= read -r -d '' page; do
    rel=${page#"$html"/}
    case "$rel" in genindex.html|search.html|_*) continue ;; esac
    png="$out/$(echo "${rel%.html}" | tr '/' '_').png"
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --hide-scrollbars --user-data-dir="$profile" \
        --window-size="$width,$height" --virtual-time-budget="$wait_ms" \
        --screenshot="$png" "file://$page" >/dev/null 2>&1 \
        || { echo "screenshot_book: failed on $rel" >&2; continue; }
    echo "$png"
    count=$((count + 1))
done < <(find "$html" -name '*.html' -print0 | sort -z)
echo "screenshot_book: $count pages -> $out"
