#!/usr/bin/env bash
# Full-page screenshots of the built book at a laptop width (1,280 px) and a phone width
# (400 px), with MathJax 3 as the live site loads it, for a reader's look at every page
# (equations, overflow, figure labels, hidden code, sidebar and top bar).
#
# Usage: scripts/screenshot_book.sh [PAGE ...]
#   PAGE   pages of the built site, e.g. book/intro book/recap (default: every page)
# Environment:
#   OUT       where the PNGs go (default: _build/screenshots), named <page>-<width>.png
#   HTML      the built site (default: _build/html; `jupyter-book build .` first)
#   WIDTHS    page widths in CSS px (default: "1280 400"; 400 is shot as a phone: touch,
#             mobile viewport, overlay scrollbars)
#   CACHE     a folder OUTSIDE the repository for the npm packages below
#             (default: /tmp/txl-book-shot-cache)
#   CHROMIUM  the browser (default: chromium, chromium-browser or google-chrome on PATH;
#             Debian/Ubuntu: `apt-get install -y chromium`)
#
# How it works. The site loads MathJax 3 from a CDN
# (https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js). To shoot offline, the
# script installs the same package from npm once into CACHE,
#     npm install --prefix "$CACHE" mathjax@3 puppeteer-core@22
# copies the site into a temporary folder and swaps only that CDN URL for the local file,
# so every page runs the same MathJax build with the same configuration the site writes
# (the built site is never modified). puppeteer-core drives the system Chromium: it loads
# a page at the given width, waits for MathJax to finish typesetting and for the fonts,
# then measures the page's height, makes the window that tall and shoots it: the whole
# page, not a fixed window.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${OUT:-$repo/_build/screenshots}")
html=$(realpath -m "${HTML:-$repo/_build/html}")
cache=$(realpath -m "${CACHE:-/tmp/txl-book-shot-cache}")
widths=${WIDTHS:-1280 400}

browser=${CHROMIUM:-}
if [[ -z "$browser" ]]; then
    for b in chromium chromium-browser google-chrome; do
        if command -v "$b" >/dev/null; then browser=$(command -v "$b"); break; fi
    done
fi
[[ -n "$browser" ]] || { echo "screenshot_book: no chromium (apt-get install chromium)" >&2; exit 1; }
[[ -d "$html" ]] || { echo "screenshot_book: $html not found; build the book first" >&2; exit 1; }
case "$cache/" in "$repo"/*) echo "screenshot_book: CACHE must be outside the repository" >&2; exit 1 ;; esac

mathjax="$cache/node_modules/mathjax/es5/tex-mml-chtml.js"
if [[ ! -f "$mathjax" || ! -d "$cache/node_modules/puppeteer-core" ]]; then
    echo "screenshot_book: installing mathjax@3 and puppeteer-core into $cache" >&2
    # puppeteer-core downloads no browser; the system Chromium is used
    npm install --prefix "$cache" --no-audit --no-fund mathjax@3 puppeteer-core@22 >&2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$html" "$tmp/site"
cdn='https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js'
n_swapped=$(grep -rl --include='*.html' -F "$cdn" "$tmp/site" | wc -l)
grep -rl --include='*.html' -F "$cdn" "$tmp/site" | xargs -r sed -i "s~$cdn~file://$mathjax~"
echo "screenshot_book: MathJax $(node -p "require('$cache/node_modules/mathjax/package.json').version") from npm on $n_swapped pages" >&2

pages=("$@")
if [[ ${#pages[@]} -eq 0 ]]; then
    while IFS= read -r -d '' f; do
        rel=${f#"$tmp/site"/}
        case "$rel" in genindex.html|search.html|index.html|_*) continue ;; esac
        pages+=("${rel%.html}")
    done < <(find "$tmp/site" -name '*.html' -print0 | sort -z)
fi
mkdir -p "$out"

cat > "$tmp/shoot.cjs" <<'JS'
// node shoot.cjs BROWSER SITE OUT "WIDTHS" PAGE...
const puppeteer = require("puppeteer-core");
const [browserPath, site, out, widths, ...pages] = process.argv.slice(2);
(async () => {
  const browser = await puppeteer.launch({
    executablePath: browserPath, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--allow-file-access-from-files"],
  });
  for (const page of pages) {
    for (const w of widths.split(/\s+/).filter(Boolean).map(Number)) {
      const tab = await browser.newPage();
      const phone = w < 600;
      await tab.setViewport({ width: w, height: phone ? 860 : 900, deviceScaleFactor: 1,
                              isMobile: phone, hasTouch: phone });
      await tab.goto(`file://${site}/${page}.html`, { waitUntil: "load", timeout: 60000 });
      // MathJax 3 resolves startup.promise once the page is typeset
      const typeset = await tab.evaluate(async () => {
        if (!window.MathJax || !window.MathJax.startup) return "no MathJax";
        await window.MathJax.startup.promise;
        return `${document.querySelectorAll("mjx-container").length} equations`;
      });
      await tab.evaluate(() => document.fonts.ready);
      await new Promise((r) => setTimeout(r, 300));
      // The whole page: measure its height, make the window that tall, shoot the window.
      // (puppeteer's fullPage option shot this theme's pages shifted sideways, with the
      // article laid out wider than the window.)
      const height = await tab.evaluate(() => document.documentElement.scrollHeight);
      await tab.setViewport({ width: w, height, deviceScaleFactor: 1,
                              isMobile: phone, hasTouch: phone });
      await new Promise((r) => setTimeout(r, 500));
      const png = `${out}/${page.replace(/\//g, "_")}-${w}.png`;
      await tab.screenshot({ path: png });
      console.log(`${png}  ${w} x ${height} px, ${typeset}`);
      await tab.close();
    }
  }
  await browser.close();
})().catch((e) => { console.error(e); process.exit(1); });
JS
NODE_PATH="$cache/node_modules" node "$tmp/shoot.cjs" "$browser" "$tmp/site" "$out" "$widths" "${pages[@]}"
