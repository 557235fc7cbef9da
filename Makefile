# Switchboard: `make run` and `make test` work on a fresh Debian 12 machine (as root, or with sudo).
SHELL := /bin/bash
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
DATA_DIR ?= ./data
PORT ?= 5300
SANITIZE_DIR ?= build-sanitize

# Debian packages the build, tests and benchmarks need. Versioned Boost 1.81 only: the 1.74 and
# 1.81 -dev packages conflict. chromium drives the console's end-to-end test; fonts-wqy-microhei
# (1.6 MB) lets its screenshots of the Chinese console show characters instead of boxes.
PACKAGES := g++ cmake make pkg-config ccache python3 \
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev \
  libssl-dev libsqlite3-dev libsodium-dev libspdlog-dev libfmt-dev libyaml-cpp-dev \
  libcli11-dev libexpected-dev libgtest-dev libgmock-dev libbenchmark-dev \
  libgoogle-perftools-dev libarchive-dev libseccomp-dev libpugixml-dev bubblewrap \
  libpoppler-cpp-dev libhnswlib-dev libpq-dev postgresql \
  python3-websockets chromium \
  fonts-wqy-microhei
BENCH_PACKAGES := wrk nginx-light

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps deps-bench configure web build run test test-sanitize unit-test api-test bench format clean

# Installs only what is missing; non-interactive and idempotent. Node.js builds the web console:
# Debian's nodejs and npm only when there is no `node` at all, so a newer Node already installed
# (from NodeSource, nvm, ...) is kept.
deps:
	@missing=$$(for p in $(PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@command -v npm >/dev/null 2>&1 || echo "warning: node is installed but npm is not: the web console cannot be built"

# The web console (web/, Vite): `npm ci` when the lock file is newer than what node_modules was
# installed from, `npm run build` when a source is newer than the last build's stamp
# (web/dist/.build-stamp, written last by the build). CMake embeds web/dist when the stamp
# changes (cmake/ConsoleAssets.cmake).
WEB_SOURCES := $(shell find web/src web/public -type f 2>/dev/null) \
  $(wildcard web/index.html web/package.json web/vite.config.ts web/tsconfig*.json)

# Vite 7 needs Node 20.19 or later; Debian 12's own nodejs is 18, so say so rather than fail
# somewhere inside the build.
NODE_CHECK := node -e 'const [a, b] = process.versions.node.split(".").map(Number); \
  if (a < 20 || (a === 20 && b < 19)) { console.error("the web console needs Node.js >= 20.19 \
  (this is " + process.version + "; Debian 12 ships 18): install a newer one, e.g. from \
  NodeSource, or build without the console: cmake --build $(BUILD_DIR)"); process.exit(1); }'

web/node_modules/.package-lock.json: web/package-lock.json
	@$(NODE_CHECK)
	cd web && npm ci --no-audit --no-fund

web/dist/.build-stamp: web/node_modules/.package-lock.json $(WEB_SOURCES)
	@$(NODE_CHECK)
	cd web && npm run build

ifneq ($(wildcard web/package.json),)
web: deps web/dist/.build-stamp
else
web:
	@echo "no web/package.json: building without the web console"
endif

deps-bench:
	@$(MAKE) --no-print-directory deps PACKAGES="$(BENCH_PACKAGES)"

# A unity build (cmake/UnityBuild.cmake): it cuts the CPU time of a clean build (docs/performance.md,
# "CI time"). A build directory configured with a plain `cmake -S . -B build` is not one.
$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DSB_UNITY_BUILD=ON

configure: deps $(BUILD_DIR)/CMakeCache.txt

build: configure web
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/switchboard serve --data-dir $(DATA_DIR) --port $(PORT)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure --timeout 300 -j $(JOBS)

# AddressSanitizer + UndefinedBehaviorSanitizer build in its own folder: -O0, a unity build and
# ccache keep it affordable, tcmalloc is off (ASan must own malloc), the benchmarks are skipped.
# Every report fails the run: the unit tests abort on it, and the API suite's harness fails a test
# when the server under test (these variables reach it) exits non-zero or wrote a report to its
# stderr. The API suite's PostgreSQL run (api_pg_*) is left to `make test`: the same server code
# as its SQLite run, which is here, and the PostgreSQL layer's own tests (pg_database_test) are
# here too; both would take CI past its time.
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer
# -O0: the sanitizers instrument the same accesses at any level (-O1 may even optimise some away),
# and -O0 compiles in less than half the CPU time of -O1, far more than the slower test run gives
# back (docs/performance.md, "CI time").
# GCC 12 flags Asio's coroutine frame allocator (awaitable_frame_base) as a mismatched new/delete
# at -O1: a known false positive (GCC PR 109224), which ASan would catch if it were real.
SANITIZE_CXX_FLAGS := -O0 -g1 $(SANITIZE_FLAGS) -Wno-mismatched-new-delete
SANITIZE_ENV := \
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:check_initialization_order=1:detect_stack_use_after_return=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

$(SANITIZE_DIR)/CMakeCache.txt:
	cmake -S . -B $(SANITIZE_DIR) -DCMAKE_BUILD_TYPE=Sanitize \
	  -DCMAKE_CXX_FLAGS_SANITIZE="$(SANITIZE_CXX_FLAGS)" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(SANITIZE_FLAGS)" -DCMAKE_SHARED_LINKER_FLAGS="$(SANITIZE_FLAGS)" \
	  -DSB_USE_TCMALLOC=OFF -DSB_BUILD_BENCH=OFF -DSB_CONSOLE_E2E=OFF -DSB_UNITY_BUILD=ON

test-sanitize: deps $(SANITIZE_DIR)/CMakeCache.txt
	cmake --build $(SANITIZE_DIR) -j $(JOBS)
	cd $(SANITIZE_DIR) && $(SANITIZE_ENV) ctest --output-on-failure --timeout 600 -j $(JOBS) \
	  -E '^api_pg_'

bench: build deps-bench
	bench/run.sh $(BUILD_DIR)

format:
	find src tests bench -name '*.cpp' -o -name '*.hpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR)
