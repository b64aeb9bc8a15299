#!/usr/bin/env bash
# Installs the Debian packages Tessel needs. Idempotent and non-interactive: it asks apt only
# for what is missing and runs `apt-get update` only when something is.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git clang clang-format libclang-rt-14-dev
  # libraries
  libsystemc-dev libboost-graph-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev libdnnl-dev libonnx-dev libprotobuf-dev
  # RTL and FPGA flow
  verilator yosys
  # oracles, model export, plots
  libonnx-testdata python3 python3-numpy python3-onnx python3-torchvision python3-matplotlib
  # the Python module (python/), its tests and the example notebook
  pybind11-dev python3-dev python3-pytest python3-pandas python3-nbconvert python3-ipykernel
  # (node and npm come with the machine image; the onnxruntime oracle installs from npm)
  # cluster sweeps
  slurm-wlm munge
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
