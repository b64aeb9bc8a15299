#!/bin/sh
# Verilator speed of the working tree's RTL against a git revision's, side by side in one
# process under the same machine load (bench/rtl/README.md). Verilates both for the micro config
# (the CMake flags: -O3 --x-assign fast --x-initial fast --no-assert, 1 thread), compiles them
# with g++ -O2 and links ab_speed.cpp against BUILD's libraries.
# Usage: bench/rtl/ab.sh BUILD BASE_REV [ROUNDS]   e.g. bench/rtl/ab.sh build/h-rtl2 HEAD 7
# Single-threaded models only: two --threads 2 models of Verilator 5.006 in one process crash
# (heap corruption in the first run); compare 2-thread models with tessel_rtl_bench instead.
set -e
BUILD=$(realpath "$1")
BASE_REV=$2
ROUNDS=${3:-5}
ROOT=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
WORK=${TMPDIR:-/tmp}/tessel_rtl_ab
VINC=/usr/share/verilator/include
CXX="nice -n 10 g++ -O2 -std=c++20 -DVM_COVERAGE=0 -DVM_SC=0 -DVM_TRACE=0 -DVM_TRACE_FST=0 -DVM_TRACE_VCD=0 -DTESSEL_RTL_HAS_FST=0"
CFG=$BUILD/hw/harness/cfg/micro/tessel_cfg_pkg.sv
rm -rf "$WORK" && mkdir -p "$WORK/base" "$WORK/new"
git -C "$ROOT" archive "$BASE_REV" hw/rtl | tar -x -C "$WORK/base"
cp -r "$ROOT/hw" "$WORK/new/"
for side in base new; do
  files=$(sed -e "s|\${CFG_PKG}|$CFG|" -e "/^\//!s|^|$WORK/$side/|" "$WORK/$side/hw/rtl/filelist.f")
  nice -n 10 verilator --cc -O3 --x-assign fast --x-initial fast --no-assert -Wno-fatal \
    --unroll-count 1024 --top-module tessel_top --prefix "V$side" -Mdir "$WORK/$side/obj" $files
  for f in "$WORK/$side/obj"/V"$side"*.cpp; do
    case $f in *__Slow*|*Syms*|*ConstPool*) opt=-O1 ;; *) opt=-O2 ;; esac
    $CXX $opt -I"$VINC" -I"$VINC/vltstd" -c "$f" -o "$f.o"
  done
done
$CXX -I"$VINC" -I"$VINC/vltstd" -c "$VINC/verilated.cpp" -o "$WORK/verilated.o"
$CXX -I"$VINC" -I"$VINC/vltstd" -c "$VINC/verilated_threads.cpp" -o "$WORK/verilated_threads.o"
$CXX -DTESSEL_SOURCE_DIR="\"$ROOT\"" -I"$ROOT" -I"$BUILD/generated" -I"$VINC" -I"$VINC/vltstd" \
  -I"$WORK/base/obj" -I"$WORK/new/obj" -c "$ROOT/bench/rtl/ab_speed.cpp" -o "$WORK/ab_speed.o"
$CXX -o "$WORK/tessel_rtl_ab" "$WORK/ab_speed.o" "$WORK"/base/obj/*.o "$WORK"/new/obj/*.o \
  "$WORK/verilated.o" "$WORK/verilated_threads.o" -Wl,--undefined=sc_main \
  "$BUILD/sim/libtessel_sim.a" "$BUILD/sim/libtessel_dram.a" "$BUILD/isa/libtessel_isa.a" \
  "$BUILD/configs/libtessel_configs.a" "$BUILD/support/libtessel_support.a" \
  -lyaml-cpp -lsystemc -pthread -latomic
"$WORK/tessel_rtl_ab" "$ROUNDS"
