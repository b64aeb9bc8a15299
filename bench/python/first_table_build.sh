#!/bin/bash
# Issue 38, item 7: the build before a first table, from a fresh build folder, ccache disabled,
# niced, -j 2; logs CPU seconds (user + sys, what machine load inflates least) and wall time of
# the configure, of `tessel_python` (`make python`) and then of the rest of `tessel_tools`
# (`make run`: the CLI with its RTL models and CUDA backend). python/README.md has the results.
# Usage: bench/python/first_table_build.sh   (LOG=... for another log; ~15 CPU-minutes)
set -u
cd "$(dirname "$0")/../.."
rm -rf build/nocache
export CCACHE_DISABLE=1
unset CMAKE_CXX_COMPILER_LAUNCHER CMAKE_C_COMPILER_LAUNCHER
log=${LOG:-/tmp/first_table_build.log}
: > "$log"
echo "start $(date -u +%FT%TZ) head $(git rev-parse --short HEAD)" >> "$log"
/usr/bin/time -f "configure wall %e s user %U s sys %S s" -a -o "$log" \
  nice -n 10 cmake -S . -B build/nocache -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  > "${log%.log}-configure.out" 2>&1
/usr/bin/time -f "tessel_python wall %e s user %U s sys %S s" -a -o "$log" \
  nice -n 10 ninja -C build/nocache -j 2 tessel_python > "${log%.log}-python.out" 2>&1
rc=$?
echo "python done $(date -u +%FT%TZ) rc $rc" >> "$log"
/usr/bin/time -f "tessel_tools (after tessel_python) wall %e s user %U s sys %S s" -a -o "$log" \
  nice -n 10 ninja -C build/nocache -j 2 tessel_tools > "${log%.log}-tools.out" 2>&1
rc=$?
echo "tools done $(date -u +%FT%TZ) rc $rc" >> "$log"
