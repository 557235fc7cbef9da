# sb_console_assets: the web console (web/dist, or SB_CONSOLE_DIST) compiled into a library that
# defines sb::http::EmbeddedConsoleTable() (src/http/console_assets.hpp).
#
# Whether a dist exists is decided at build time, not at configure time: a small step runs on
# every build and rewrites console_assets/dist-state only when the dist's .build-stamp (or, in a
# dist without one, its listing) changed or the dist appeared or vanished. The generator depends on
# that file, so it runs once per web build, and a binary configured before `npm run build` picks
# the console up on its next `cmake --build`. Without a dist the table is empty and the server
# answers the console's paths with a 503 that says so.
set(SB_CONSOLE_DIST "${CMAKE_SOURCE_DIR}/web/dist" CACHE PATH
    "The web console's build output (Vite's dist) to compile into the binary")
find_package(Python3 REQUIRED COMPONENTS Interpreter)
# Brotli copies are made with node's zlib (Python's standard library has no brotli); node is
# present wherever the dist was built. Without it only gzip copies are made.
find_program(SB_NODE_EXECUTABLE node)
if(NOT SB_NODE_EXECUTABLE)
  set(SB_NODE_EXECUTABLE "")
endif()

set(sb_console_out ${CMAKE_BINARY_DIR}/console_assets)
set(sb_console_generator ${CMAKE_SOURCE_DIR}/cmake/embed_console.py)
file(MAKE_DIRECTORY ${sb_console_out})

add_custom_target(sb_console_dist_state
  COMMAND ${Python3_EXECUTABLE} ${sb_console_generator} state --dist ${SB_CONSOLE_DIST}
          --state ${sb_console_out}/dist-state
  BYPRODUCTS ${sb_console_out}/dist-state
  COMMENT "Checking the web console's dist"
  VERBATIM)

add_custom_command(
  OUTPUT ${sb_console_out}/console_assets.S ${sb_console_out}/console_table.cpp
  COMMAND ${Python3_EXECUTABLE} ${sb_console_generator} generate --dist ${SB_CONSOLE_DIST}
          --out ${sb_console_out} --node "${SB_NODE_EXECUTABLE}"
  DEPENDS ${sb_console_out}/dist-state sb_console_dist_state ${sb_console_generator}
  COMMENT "Embedding the web console from ${SB_CONSOLE_DIST}"
  VERBATIM)

add_library(sb_console_assets STATIC ${sb_console_out}/console_assets.S
                                     ${sb_console_out}/console_table.cpp)
add_dependencies(sb_console_assets sb_console_dist_state)
