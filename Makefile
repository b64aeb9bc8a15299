# The whole set-up: `make run` and `make test` on a fresh Debian machine (see README.md).
PRESET ?= default
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)
TESSEL := $(BUILD_DIR)/tools/tessel/tessel

.PHONY: all deps configure build run test format format-check clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	cmake --preset $(PRESET)

build: configure
	cmake --build --preset $(PRESET) -j $(JOBS)

run: build
	$(TESSEL) run

test: build
	ctest --preset $(PRESET) -j $(JOBS)

format:
	git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh' | xargs clang-format -i

format-check:
	git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh' | xargs clang-format --dry-run -Werror

clean:
	rm -rf build
