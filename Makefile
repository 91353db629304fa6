# Makefile: short commands over the CMake build. See README.md.
#
#   make demo    build (Release) and run the demo pipelines (C, then Lua) on
#                the CPU device
#   make test    build and run the whole test suite
#   make asan    the suite under AddressSanitizer + UBSan
#   make tsan    the concurrency tests under ThreadSanitizer
#   make bench   run the benchmarks and print the table of ratios
#   make install PREFIX=/usr/local
#
# -Werror is on when CI is set in the environment (CI=true), or with
# WERROR=ON. JOBS sets build and test parallelism (default: all cores).

JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
WERROR ?= $(if $(CI),ON,OFF)
PREFIX ?= /usr/local
CMAKE  ?= cmake
CTEST  ?= ctest

# Sanitizer lists hold commas, so they live in variables: a literal comma
# would split the arguments of $(call).
ASAN_SANITIZERS := address,undefined

# configure DIR FLAGS...: configures the build tree DIR.
configure = $(CMAKE) -S . -B $(1) -DDC_WERROR=$(WERROR) $(2)

.PHONY: demo test asan tsan bench install clean

demo:
	$(call configure,build-release,-DCMAKE_BUILD_TYPE=Release)
	$(CMAKE) --build build-release -j $(JOBS) --target pipeline_demo dclua
	./build-release/pipeline_demo
	./build-release/dclua examples/lua/devices.lua
	./build-release/dclua scripts/image_pipeline.lua --device cpu \
	  --size 512x384

test:
	$(call configure,build,-DCMAKE_BUILD_TYPE=RelWithDebInfo)
	$(CMAKE) --build build -j $(JOBS)
	$(CTEST) --test-dir build -j $(JOBS) --output-on-failure

# Sanitizer runs skip the benchmarks and examples, which they do not test.
asan:
	$(call configure,build-asan,-DCMAKE_BUILD_TYPE=Debug \
	  -DDC_SANITIZE=$(ASAN_SANITIZERS) -DDC_BUILD_BENCH=OFF)
	$(CMAKE) --build build-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	CK_TIMEOUT_MULTIPLIER=4 \
	  $(CTEST) --test-dir build-asan -j $(JOBS) --output-on-failure

tsan:
	$(call configure,build-tsan,-DCMAKE_BUILD_TYPE=Debug \
	  -DDC_SANITIZE=thread -DDC_BUILD_BENCH=OFF -DDC_BUILD_EXAMPLES=OFF)
	$(CMAKE) --build build-tsan -j $(JOBS)
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	CK_TIMEOUT_MULTIPLIER=10 \
	  $(CTEST) --test-dir build-tsan -j $(JOBS) -L concurrency \
	    --output-on-failure

bench:
	sh bench/run.sh

install:
	$(call configure,build-release,-DCMAKE_BUILD_TYPE=Release)
	$(CMAKE) --build build-release -j $(JOBS)
	$(CMAKE) --install build-release --prefix $(PREFIX)

clean:
	rm -rf build build-release build-asan build-tsan build-bench
