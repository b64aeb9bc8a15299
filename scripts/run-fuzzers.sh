#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang++ (ASan + UBSan) and runs each for N seconds.
# Usage: scripts/run-fuzzers.sh [SECONDS=60]   (CI runs 60 s each; any crash exits non-zero)
# Outputs go to build/fuzz/ (override with TESSEL_FUZZ_BUILD); crashes are written there.
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${TESSEL_FUZZ_BUILD:-$root/build/fuzz}
cxx=${TESSEL_FUZZ_CXX:-clang++}
mkdir -p "$out/generated/isa" "$out/obj" "$out/corpus/decode" "$out/corpus/asm"

# The ISA header is generated from the table, as the CMake build does.
"$cxx" -std=c++20 -O1 "$root/isa/gen/isa_gen.cpp" -lyaml-cpp -o "$out/isa_gen"
"$out/isa_gen" "$root/isa/isa_table.yaml" "$out/generated/isa/isa_generated.hpp" \
  "$out/generated/isa/tessel_isa_pkg.sv"

flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=undefined -I"$root" -I"$out/generated")
objects=()
for source in isa/instruction.cpp isa/program.cpp isa/assembler.cpp isa/target.cpp \
              isa/timing.cpp support/diagnostic.cpp support/strings.cpp; do
  object="$out/obj/$(echo "$source" | tr / _).o"
  "$cxx" "${flags[@]}" -c "$root/$source" -o "$object"
  objects+=("$object")
done

# Seeds: the microbenchmark programs, and a one-instruction .bin (header + finish).
cp "$root"/tests/isa/programs/*.tasm "$out/corpus/asm/"
{ printf 'TISA\001\000\040\000\001\000\000\000\000\000\000\000\012'; head -c 31 /dev/zero; } \
  > "$out/corpus/decode/finish.bin"

status=0
for target in decode asm; do
  "$cxx" "${flags[@]}" -fsanitize=fuzzer "$root/fuzz/fuzz_$target.cpp" "${objects[@]}" \
    -o "$out/fuzz_$target"
  echo "== fuzz_$target for ${seconds}s"
  (cd "$out" && "./fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=2048 \
      -print_final_stats=1 "corpus/$target") || status=1
done
"$root/scripts/run-onnx-fuzzer.sh" "$seconds" || status=1
exit $status
