#!/usr/bin/env bash
# Builds fuzz/fuzz_onnx.cpp (the ONNX importer) with clang++ (ASan + UBSan) and runs it for N
# seconds, seeded with the small ONNX backend node tests when libonnx-testdata is installed.
# Usage: scripts/run-onnx-fuzzer.sh [SECONDS=60]   (run-fuzzers.sh calls it; a crash exits non-zero)
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${TESSEL_FUZZ_BUILD:-$root/build/fuzz}
cxx=${TESSEL_FUZZ_CXX:-clang++}
mkdir -p "$out/obj-onnx" "$out/corpus/onnx"

flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=undefined -DONNX_ML=1 -DONNX_NAMESPACE=onnx -I"$root")
# shellcheck source=scripts/fuzz-unity.sh
. "$root/scripts/fuzz-unity.sh"
frontend=()
for source in "$root"/compiler/frontend/*.cpp; do frontend+=("${source#"$root"/}"); done
fuzz_unity_object "$out/obj-onnx/importer.o" "${frontend[@]}" compiler/ir/tensor.cpp \
  compiler/ir/op.cpp compiler/ir/analysis.cpp compiler/ir/graph.cpp \
  compiler/ir/shape_inference.cpp compiler/ir/shape_rules.cpp compiler/ir/unary.cpp \
  support/cancel.cpp support/diagnostic.cpp support/files.cpp support/strings.cpp
"$cxx" "${flags[@]}" -fsanitize=fuzzer "$root/fuzz/fuzz_onnx.cpp" "$out/obj-onnx/importer.o" \
  -lonnx_proto -lprotobuf -o "$out/fuzz_onnx"

# Seeds: every backend node test model under 4 KiB (small graphs of every op).
testdata=/usr/share/libonnx-testdata/data/node
if [ -d "$testdata" ]; then
  find "$testdata" -name model.onnx -size -4k | while read -r model; do
    cp "$model" "$out/corpus/onnx/$(basename "$(dirname "$model")").onnx"
  done
fi
echo "== fuzz_onnx for ${seconds}s"
# -timeout: an input running past 20 s is a reported hang; the outer timeout stops a stuck report
# (see run-fuzzers.sh).
cd "$out" && timeout -k 10 $((2 * seconds + 120)) ./fuzz_onnx -max_total_time="$seconds" \
  -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 corpus/onnx
