# The whole set-up: `make run` and `make test` on a fresh Debian machine (see README.md).
PRESET ?= default
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)
TESSEL := $(BUILD_DIR)/tools/tessel/tessel

.PHONY: all deps configure build build-tools python install-python run test oracle-data format \
	format-check clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	cmake --preset $(PRESET)

build: configure
	cmake --build --preset $(PRESET) -j $(JOBS)

# Only what `tessel run` and the Python module need (target tessel_tools), not the ~50 test
# executables: `make run` gets to its table sooner; `make test` builds the rest.
build-tools: configure
	cmake --build --preset $(PRESET) -j $(JOBS) --target tessel_tools

# Only the Python module (no CLI, RTL models, CUDA kernels or tests): `import tessel` sooner
# (python/README.md); install-python copies it onto /usr/bin/python3's path.
python: configure
	cmake --build --preset $(PRESET) -j $(JOBS) --target tessel_python

install-python: python
	cmake --install $(BUILD_DIR) --component python --strip

# The main job on its defaults (ResNet-18, npc19-deepfusion, every policy, each output checked
# bit for bit against the golden executor): a few seconds on 2 cores after the build (README.md);
# `tessel run --timing-only` gives the same cycles and bytes in a few seconds.
run: build-tools
	$(TESSEL) run

# Outside oracles into the git-ignored .cache/: the six torchvision exports and onnxruntime-node
# from npm. Both steps are idempotent; when npm is missing the onnxruntime tests skip and say so.
# After deps (the export needs python3-torchvision); `make -j2 test` (CI) runs it beside the
# build: on a fresh clone it is ~60 s of one core, which left the other idle.
oracle-data: deps
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
