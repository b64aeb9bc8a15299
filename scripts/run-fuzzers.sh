#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang++ (ASan + UBSan) and runs each for N seconds.
# Usage: scripts/run-fuzzers.sh [SECONDS=60] [ONNX_SECONDS=SECONDS]   (CI runs these four 30 s
# each, two at a time, and the ONNX importer's 60 s beside them; any crash exits non-zero)
# Targets: decode, asm (isa/), config (the YAML config loader), npy (the .npy reader), onnx
# (scripts/run-onnx-fuzzer.sh).
# Outputs go to build/fuzz/ (override with TESSEL_FUZZ_BUILD); crashes are written there.
# A hang is a failure, never a stuck CI: one input running past 20 s is reported (libFuzzer's
# -timeout, reproducer written as timeout-*), and each fuzzer is killed at twice its time plus two
# minutes (libFuzzer's out-of-memory report walks the whole heap and never ended on 2 GB once).
set -euo pipefail
seconds=${1:-60}
onnx_seconds=${2:-$seconds}
fuzz_wall=$((2 * seconds + 120))
root=$(cd "$(dirname "$0")/.." && pwd)
out=${TESSEL_FUZZ_BUILD:-$root/build/fuzz}
cxx=${TESSEL_FUZZ_CXX:-clang++}
mkdir -p "$out/generated/isa" "$out/obj" "$out/corpus/decode" "$out/corpus/asm" \
  "$out/corpus/config" "$out/corpus/npy"

# The ISA header is generated from the table, as the CMake build does.
"$cxx" -std=c++20 -O1 "$root/isa/gen/isa_gen.cpp" -lyaml-cpp -o "$out/isa_gen"
"$out/isa_gen" "$root/isa/isa_table.yaml" "$out/generated/isa/isa_generated.hpp" \
  "$out/generated/isa/tessel_isa_pkg.sv"

flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=undefined -I"$root" -I"$out/generated"
       -DTESSEL_HW_CONFIG_DIR="\"$root/configs/hw\"")
# shellcheck source=scripts/fuzz-unity.sh
. "$root/scripts/fuzz-unity.sh"
fuzz_unity_object "$out/obj/readers.o" isa/instruction.cpp isa/program.cpp isa/assembler.cpp \
  isa/target.cpp isa/timing.cpp support/diagnostic.cpp support/strings.cpp support/files.cpp \
  support/npy.cpp support/units.cpp configs/hw_config.cpp configs/hw_config_loader.cpp \
  configs/energy_config.cpp configs/energy_model.cpp configs/yaml_documents.cpp
objects=("$out/obj/readers.o")

# Seeds: the microbenchmark programs, one-instruction .bins (header + finish, header + matmul) of
# the current ISA version and an empty one of the oldest readable version (it is written back as
# the current one).
cp "$root"/tests/isa/programs/*.tasm "$out/corpus/asm/"
{ printf 'TISA\003\000\040\000\001\000\000\000\000\000\000\000\012'; head -c 31 /dev/zero; } \
  > "$out/corpus/decode/finish.bin"
printf 'TISA\002\000\040\000\000\000\000\000\000\000\000\000' > "$out/corpus/decode/empty_v2.bin"
# One matmul (opcode 14: m, n, k = 1, transpose_b) so the decoder's mutations start from its fields.
{ printf 'TISA\003\000\040\000\001\000\000\000\000\000\000\000\016\000\000\200'; head -c 12 /dev/zero
  printf '\001\020\000\020'; head -c 12 /dev/zero; } > "$out/corpus/decode/matmul.bin"
# The row normaliser's encodings (ISA v3, opcodes 16 and 17): a causal softmax with a negative
# mask_offset (a signed 18-bit field up to its last bit) and a norm at its widest row (c_size 2^14).
python3 - "$out/corpus/decode/row_normalise.bin" <<'PY'
import sys
softmax, norm = bytearray(32), bytearray(32)
for at, v in {0: 0x10, 2: 0x12, 3: 0x13, 13: 0x01, 14: 0x04, 15: 0x10, 25: 0xf0, 26: 0xff,
              27: 0x7f}.items():
    softmax[at] = v
for at, v in {0: 0x11, 13: 0x01, 14: 0x04, 17: 0x04, 25: 0x10}.items():
    norm[at] = v
header = b"TISA\x03\x00\x20\x00" + (2).to_bytes(8, "little")
open(sys.argv[1], "wb").write(header + softmax + norm)
PY

# The config loader: the shipped configs and the catalogue of malformed ones.
cp "$root"/configs/hw/*.yaml "$root"/tests/configs/bad/*.yaml "$out/corpus/config/"
# .npy: one small array of each dtype, as NumPy writes them (format 1.0, 64-byte aligned).
python3 - "$out/corpus/npy" <<'PY'
import struct, sys
for descr, shape, data in [("<f4", (2, 3), struct.pack("<6f", 0, 1, -2, 3.5, float("nan"), 1e30)),
                           ("|i1", (4,), bytes([1, 255, 0, 127])),
                           ("<i2", (1, 2), struct.pack("<2h", -3, 300)),
                           ("<i4", (), struct.pack("<i", 7))]:
    dims = "".join(f"{d}, " for d in shape) if len(shape) != 1 else f"{shape[0]},"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims.rstrip(", ") if len(shape) > 1 else dims)
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    blob = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data
    open(f"{sys.argv[1]}/seed_{descr[1:]}.npy", "wb").write(blob)
PY

# The ONNX importer's fuzzer builds and runs on its own, beside these (CI has two cores).
"$root/scripts/run-onnx-fuzzer.sh" "$onnx_seconds" > "$out/fuzz_onnx.log" 2>&1 &
onnx_pid=$!

status=0
for target in decode asm config npy; do
  "$cxx" "${flags[@]}" -fsanitize=fuzzer "$root/fuzz/fuzz_$target.cpp" "${objects[@]}" \
    -lyaml-cpp -o "$out/fuzz_$target"
done
report_failure() {
  echo "run-fuzzers: $(basename "$1" .log) failed; its report:" >&2
  grep -E -m 40 'ERROR|SUMMARY|runtime error|deadly signal|Test unit written|^    #[0-9]+ ' "$1" >&2 || true
}
# Two at a time, SECONDS of wall time each.
run_one() {
  local rc=0
  echo "== fuzz_$1 for ${seconds}s"
  (cd "$out" && timeout -k 10 "$fuzz_wall" "./fuzz_$1" -max_total_time="$seconds" -timeout=20 \
      -rss_limit_mb=2048 -print_final_stats=1 "corpus/$1") > "$out/fuzz_$1.log" 2>&1 || rc=$?
  [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || echo "run-fuzzers: fuzz_$1 killed after ${fuzz_wall}s" >&2
  tail -n 5 "$out/fuzz_$1.log"
  # libFuzzer prints its final stats after a crash report: show the report, not only the stats.
  [ "$rc" -eq 0 ] || report_failure "$out/fuzz_$1.log"
  return $rc
}
for pair in "decode asm" "config npy"; do
  pids=()
  for target in $pair; do
    run_one "$target" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
done
onnx_rc=0
wait "$onnx_pid" || onnx_rc=$?
tail -n 5 "$out/fuzz_onnx.log"
[ "$onnx_rc" -eq 0 ] || { status=1; report_failure "$out/fuzz_onnx.log"; }
[ "$status" -eq 0 ] || echo "run-fuzzers: a fuzzer failed (logs in $out/fuzz_*.log)" >&2
exit $status
