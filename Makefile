# Lavik: the two commands are `make run` and `make test` (see README.md).
JOBS ?= $(shell nproc)
PYTHON ?= /usr/bin/python3
CMAKE_FLAGS ?=

.PHONY: deps build run test layers format format-check unit asan integration bench clean

deps:
	@bash scripts/install-deps.sh

build: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	cmake --build build -j$(JOBS)

# Starts the server on 127.0.0.1:6379 with the embedded defaults (./data, ./logs).
run: build
	exec ./build/lavik

test: deps format-check layers build unit asan integration

# Includes follow src/layers.txt and no files include each other in a cycle (doc/layers.md).
layers:
	$(PYTHON) scripts/check_layers.py

unit: build
	cd build && ctest --output-on-failure -j$(JOBS)

# The unit tests once more under AddressSanitizer + UndefinedBehaviorSanitizer. Stack-use-after-
# return detection is on: a callback that outlives its test frame fails every run, not one in many.
asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLAVIK_SANITIZE=ON >/dev/null
	cmake --build build-asan -j$(JOBS) --target lavik_unit_tests
	ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 UBSAN_OPTIONS=print_stacktrace=1 ./build-asan/lavik_unit_tests --gtest_brief=1

integration: build
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/integration

FORMAT_FILES = $(shell find src tests bench -name '*.cc' -o -name '*.h' 2>/dev/null)
format:
	clang-format -i $(FORMAT_FILES)

format-check: deps
	@out=$$(clang-format --dry-run -Werror $(FORMAT_FILES) 2>&1) || { echo "$$out" | head -40; \
	  echo "format-check: run 'make format'" >&2; exit 1; }
	@echo "format-check: $(words $(FORMAT_FILES)) files clean"

bench: build
	bash bench/compare.sh

clean:
	rm -rf build build-asan
