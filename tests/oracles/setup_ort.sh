#!/usr/bin/env bash
# Installs onnxruntime-node (its CPU binaries ship in the package) into the git-ignored cache
# ${TESSEL_CACHE:-<repo>/.cache}/ort. Exit 0 when present/installed, 2 when npm cannot install
# (callers skip with this message).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
dir="${TESSEL_CACHE:-$repo/.cache}/ort"
if [[ -d "$dir/node_modules/onnxruntime-node" ]]; then
  echo "setup_ort: onnxruntime-node present in $dir"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "setup_ort: npm not found; onnxruntime checks are skipped" >&2
  exit 2
fi
mkdir -p "$dir"
if ! (cd "$dir" && npm install --ignore-scripts --no-audit --no-fund onnxruntime-node >&2); then
  echo "setup_ort: npm could not install onnxruntime-node; onnxruntime checks are skipped" >&2
  exit 2
fi
echo "setup_ort: installed onnxruntime-node into $dir"
