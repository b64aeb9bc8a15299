# The whole set-up: `make run` and `make test` on a fresh Debian machine (see README.md).
PRESET ?= default
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)
TESSEL := $(BUILD_DIR)/tools/tessel/tessel

.PHONY: all deps configure build run test oracle-data format format-check clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	cmake --preset $(PRESET)

build: configure
	cmake --build --preset $(PRESET) -j $(JOBS)

# The main job on its defaults (ResNet-18, npc19-deepfusion, every policy). --timing-only: full
# functional simulation of ResNet-18 under five policies takes minutes per policy on 2 cores
# (docs/codegen.md); `tessel run` without the flag also checks every output bit for bit.
run: build
	$(TESSEL) run --timing-only

# Outside oracles into the git-ignored .cache/: the six torchvision exports and onnxruntime-node
# from npm. Both steps are idempotent; when npm is missing the onnxruntime tests skip and say so.
oracle-data:
	/usr/bin/python3 experiments/models/export_torchvision.py
	tests/oracles/setup_ort.sh || echo "make: onnxruntime-node unavailable; its tests will skip"

test: build oracle-data
	ctest --preset $(PRESET) -j $(JOBS)

format:
	git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh' | xargs clang-format -i

format-check:
	git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh' | xargs clang-format --dry-run -Werror

clean:
	rm -rf build
