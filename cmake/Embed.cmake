# sb_embed_text(<target> <symbol> <file>): compiles <file>'s text into <target> as
# `extern const std::string_view sb::embedded::<symbol>`.
function(sb_embed_text target symbol file)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/embedded_${symbol}.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${file} -DOUT=${out} -DSYMBOL=${symbol}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    DEPENDS ${file} ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
  # One string literal: the precompiled header would only add its load time.
  set_source_files_properties(${out} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
endfunction()
