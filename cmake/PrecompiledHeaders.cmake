# Precompiled headers for the third-party headers that nearly every translation unit parses:
# the standard library, fmt/spdlog, tl::expected, Boost.JSON and the Asio coroutine core (and
# GoogleTest for the tests). Parsing them costs about 2.3 s of CPU per TU at -O3; loading the
# precompiled form costs about 0.6 s (docs/performance.md, "Build and CI time"). Only system
# headers go in, never our own, so editing a header in src/ never rebuilds a PCH: incremental
# builds are not slowed down.
#
# Two PCHs are compiled per build, one for src/ and bench/ (host target sb_pch) and one for the
# tests (sb_test_pch, which adds gtest), and every target reuses one of them (REUSE_FROM), so the
# ~7 s PCH compile is paid twice instead of once per target. GCC only accepts a PCH compiled with
# the same code-generation flags and macro definitions: all our targets share CMAKE_CXX_FLAGS,
# and the host targets link exactly the libraries whose usage requirements add definitions
# (Boost.JSON, fmt, spdlog, gtest), so consumers define a superset. Should a target ever differ,
# GCC's -Winvalid-pch (CMake adds it) says so and the headers are parsed normally: slower, never
# wrong.
#
# Beast, Asio's SSL/TCP and Boost.URL stay out: only about 15 TUs use them and a PCH with them is
# 55 % bigger (282 MB instead of 182 MB), which every other TU would pay to load.
#
# -DSB_PCH=OFF builds without them, e.g. to check that every file includes what it uses (a PCH
# makes a missing #include <string> invisible).
option(SB_PCH "Precompile the common third-party headers (faster clean builds)" ON)

set(SB_PCH_HEADERS
    <algorithm> <atomic> <chrono> <cstddef> <cstdint> <deque> <filesystem> <functional> <map>
    <memory> <mutex> <optional> <string> <string_view> <thread> <unordered_map> <utility>
    <vector>
    <fmt/format.h> <spdlog/spdlog.h> <tl/expected.hpp>
    <boost/json/array.hpp> <boost/json/object.hpp> <boost/json/string.hpp>
    <boost/json/value.hpp>
    <boost/asio/any_io_executor.hpp> <boost/asio/as_tuple.hpp> <boost/asio/awaitable.hpp>
    <boost/asio/co_spawn.hpp> <boost/asio/detached.hpp> <boost/asio/executor_work_guard.hpp>
    <boost/asio/io_context.hpp> <boost/asio/post.hpp> <boost/asio/steady_timer.hpp>
    <boost/asio/strand.hpp> <boost/asio/this_coro.hpp> <boost/asio/use_awaitable.hpp>)

# Every C++ target created under `dir` and its subdirectories.
function(sb_pch_collect_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    sb_pch_collect_targets(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Makes every library and executable in the project reuse a PCH: the tests' (under tests/) that
# of sb_test_pch, the others that of sb_pch.
function(sb_pch_attach_all)
  sb_pch_collect_targets(${PROJECT_SOURCE_DIR} targets)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    get_target_property(dir ${target} SOURCE_DIR)
    # sb_console_assets is generated data (a table and .incbin): nothing to parse.
    if(NOT type MATCHES "^(STATIC_LIBRARY|EXECUTABLE)$" OR target STREQUAL "sb_console_assets")
      continue()
    endif()
    if(dir MATCHES "^${PROJECT_SOURCE_DIR}/tests(/|$)")
      target_precompile_headers(${target} REUSE_FROM sb_test_pch)
    else()
      target_precompile_headers(${target} REUSE_FROM sb_pch)
    endif()
  endforeach()
endfunction()

# Call after every add_subdirectory: the targets must exist.
function(sb_enable_pch)
  if(NOT SB_PCH)
    return()
  endif()
  # An object library with one empty TU only hosts the PCH; nothing links it.
  add_library(sb_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch_host.cpp)
  target_link_libraries(sb_pch PRIVATE Boost::headers Boost::json fmt::fmt spdlog::spdlog)
  target_precompile_headers(sb_pch PRIVATE ${SB_PCH_HEADERS})
  # GCC 12 at -O3 gives false -Warray-bounds / -Wstringop-overflow warnings inside std::string
  # (its known std::string false positives, GCC PR 105329 and kin) in these files when they use a
  # PCH, and not when the very same headers are included as text: loading a PCH changes the order
  # in which GCC processes the functions, so its inlining. They parse the headers instead.
  # Should another file trip it, add it here.
  set_source_files_properties(
    ${PROJECT_SOURCE_DIR}/src/pipeline/trigger_rules.cpp
    ${PROJECT_SOURCE_DIR}/src/pipeline/ignore_rules.cpp
    DIRECTORY ${PROJECT_SOURCE_DIR}/src/pipeline
    PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  set_source_files_properties(
    ${PROJECT_SOURCE_DIR}/src/platforms/common/lark_crypto.cpp
    ${PROJECT_SOURCE_DIR}/src/platforms/common/wechat_crypto.cpp
    ${PROJECT_SOURCE_DIR}/src/platforms/common/ed25519.cpp
    ${PROJECT_SOURCE_DIR}/src/platforms/webhook/webhook_adapter.cpp
    DIRECTORY ${PROJECT_SOURCE_DIR}/src/platforms
    PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  set_source_files_properties(${PROJECT_SOURCE_DIR}/src/app/data_dir.cpp
                              DIRECTORY ${PROJECT_SOURCE_DIR}/src/app
                              PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  if(TARGET pipeline_test)
    set_source_files_properties(${PROJECT_SOURCE_DIR}/tests/unit/pipeline_test.cpp
                                ${PROJECT_SOURCE_DIR}/tests/unit/storage_test.cpp
                                ${PROJECT_SOURCE_DIR}/tests/unit/knowledge_test.cpp
                                DIRECTORY ${PROJECT_SOURCE_DIR}/tests
                                PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
  # Built only when a test target needs it (EXCLUDE_FROM_ALL).
  find_package(GTest QUIET)
  if(NOT GTest_FOUND)
    sb_pch_attach_all()
    return()
  endif()
  add_library(sb_test_pch OBJECT EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/cmake/pch_host.cpp)
  target_link_libraries(sb_test_pch PRIVATE Boost::headers Boost::json fmt::fmt spdlog::spdlog
                                            GTest::gtest)
  target_compile_options(sb_test_pch PRIVATE -Wno-restrict)  # as sb_unit_test (tests/) does
  target_precompile_headers(sb_test_pch PRIVATE ${SB_PCH_HEADERS} <gtest/gtest.h>)
  sb_pch_attach_all()
endfunction()
