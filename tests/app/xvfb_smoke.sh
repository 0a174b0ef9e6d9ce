#!/usr/bin/env bash
# A person at a real window: start ragdesk under Xvfb on the sample notes, type a question,
# copy the prompt with Ctrl+Shift+C, read the clipboard, and save a screenshot.
# Needs: apt-get install xvfb xdotool xclip imagemagick.   Usage: bash tests/app/xvfb_smoke.sh [OUT.png]
set -euo pipefail
out=${1:-/tmp/ragdesk-xvfb.png}
tmp=$(mktemp -d)
trap 'kill $app $xvfb 2>/dev/null || true; rm -rf "$tmp"' EXIT
Xvfb :77 -screen 0 1400x900x24 >/dev/null 2>&1 &
xvfb=$!
export DISPLAY=:77 XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache"
unset QT_QPA_PLATFORM
sleep 1
python3 -m ragdesk &
app=$!
for _ in $(seq 1 60); do
  win=$(xdotool search --name "ragdesk" 2>/dev/null | head -1) && [ -n "$win" ] && break
  sleep 0.5
done
[ -n "${win:-}" ] || { echo "no ragdesk window appeared"; exit 1; }
xdotool windowactivate --sync "$win" 2>/dev/null || xdotool windowfocus --sync "$win"
sleep 3                                   # let the first index build finish
xdotool key --window "$win" ctrl+l
xdotool type --delay 40 "how do I undo a pushed commit"
xdotool key Return
sleep 2
xdotool key ctrl+shift+c
sleep 0.5
clip=$(xclip -selection clipboard -o)
import -window root "$out" 2>/dev/null || true
echo "$clip" | head -12
grep -q "^\[1\] (en/git-undo.md" <<<"$clip" && grep -q "Question: how do I undo a pushed commit" <<<"$clip"
echo "xvfb smoke ok: the clipboard holds the prompt; screenshot: $out"
