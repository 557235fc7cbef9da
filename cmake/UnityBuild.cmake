# Unity ("jumbo") builds of the libraries under src/: CMake compiles each library's sources in
# batches of SB_UNITY_BATCH_SIZE, one translation unit per batch, so the headers (and Asio's and
# Beast's templates) that the files of a batch share are parsed and instantiated once instead of
# once per file. It is for clean builds (CI, `make`): `cmake -DSB_UNITY_BUILD=ON`. Off by default,
# because an incremental build then recompiles a whole batch for a one-file edit, and ccache
# misses a batch whenever any of its files changed (docs/performance.md, "CI time").
#
# Files in one batch share a translation unit, so two file-local definitions of the same name
# (an anonymous-namespace helper, a `static` function, a `using` alias, a macro) collide there.
# The files listed below do; they are compiled on their own (SKIP_UNITY_BUILD_INCLUSION) rather
# than renamed. Which files share a batch depends on the order of a target's sources, so adding a
# file can move a collision into one batch: a unity build (`make test`) that fails with
# "redefinition of", "ambiguating new declaration" or "redeclared as different kind of entity"
# names the file to list here.
option(SB_UNITY_BUILD "Compile the libraries in src/ as unity batches (faster clean builds)" OFF)
set(SB_UNITY_BATCH_SIZE 8 CACHE STRING "Sources per unity batch (SB_UNITY_BUILD)")

# Files that cannot share a translation unit with the others of their library, by folder, and the
# name they would redefine (found by a unity build, not by renaming anything).
set(SB_UNITY_SKIP_util metrics_registry.cpp)                      # AppendEscaped (json.cpp)
set(SB_UNITY_SKIP_domain)
set(SB_UNITY_SKIP_config)
set(SB_UNITY_SKIP_storage                                         # ReadRow, NotFound, kSelect,
    sql/bot_log_repository.cpp sql/bot_repository.cpp       # AppendIn in most repositories
    sql/conversation_repository.cpp sql/mcp_server_repository.cpp
    sql/model_repository.cpp sql/monitoring_repository.cpp sql/pipeline_repository.cpp
    sql/plugin_repository.cpp sql/provider_repository.cpp sql/task_repository.cpp
    sql/webhook_repository.cpp)
set(SB_UNITY_SKIP_net beast_http_client.cpp)                      # Clock, kTuple, tcp
set(SB_UNITY_SKIP_llm anthropic_protocol.cpp openai_protocol.cpp) # InBandError, ReadUsage, WireMessage
set(SB_UNITY_SKIP_platforms
    telegram/telegram_encode.cpp                                  # IsSpace, Units
    wecom/wecomcs_adapter.cpp                                     # Core, kRememberedMessages
    slack/slack_adapter.cpp)                                      # Json (slack_codec's using util::Json)
set(SB_UNITY_SKIP_pipeline output_rules.cpp)                      # Trim (content_filter.cpp)
set(SB_UNITY_SKIP_runtime)
set(SB_UNITY_SKIP_runners                                         # Turn, ReadTurn, OnDelta, Stream,
    coze_runner.cpp dashscope_runner.cpp langflow_runner.cpp n8n_runner.cpp   # kService, ...
    tbox_runner.cpp)
set(SB_UNITY_SKIP_webhooks)
set(SB_UNITY_SKIP_plugins plugin_cgroup.cpp)                      # WriteFile (package.cpp)
set(SB_UNITY_SKIP_mcp
    session_core.cpp                                              # Failed (http_session.cpp)
    stdio_session.cpp)                                            # kUseTuple (sse_session.cpp)
set(SB_UNITY_SKIP_knowledge)
set(SB_UNITY_SKIP_services                                        # NotFound, Apply, kMaxName,
    bot_service.cpp file_store.cpp model_service.cpp pipeline_service.cpp  # kMaxNameBytes
    webhook_service.cpp)
set(SB_UNITY_SKIP_http websocket_session.cpp)                     # kTuple (server.cpp)
set(SB_UNITY_SKIP_app)

# Call after every add_subdirectory (the targets must exist) and after sb_enable_pch().
function(sb_enable_unity)
  if(NOT SB_UNITY_BUILD)
    return()
  endif()
  foreach(folder util domain config storage net llm platforms pipeline runtime runners webhooks
                 plugins mcp knowledge services http app)
    set(dir ${PROJECT_SOURCE_DIR}/src/${folder})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target ${targets})
      get_target_property(type ${target} TYPE)
      if(NOT type STREQUAL "STATIC_LIBRARY" OR target STREQUAL "sb_console_assets")
        continue()
      endif()
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON
                                                 UNITY_BUILD_BATCH_SIZE ${SB_UNITY_BATCH_SIZE})
      # GCC warns when a class with linkage has a member of an anonymous-namespace type and is
      # not defined in the main file, because then it is usually in a header and so in several
      # TUs. In a batch every .cpp is an included file, so the classes of our .cpp files (a
      # pimpl, a coroutine frame) are flagged although each is still in one TU only; the plain
      # build keeps the warning for the case it exists for.
      target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
      # The files that skip the precompiled header (GCC 12's false std::string warnings with
      # it, cmake/PrecompiledHeaders.cmake) would get it back inside a batch: keep them apart.
      get_target_property(sources ${target} SOURCES)
      set(skip)
      foreach(source ${sources})
        if(NOT IS_ABSOLUTE ${source})
          set(source ${dir}/${source})
        endif()
        get_source_file_property(no_pch ${source} DIRECTORY ${dir} SKIP_PRECOMPILE_HEADERS)
        if(no_pch)
          list(APPEND skip ${source})
        endif()
      endforeach()
      foreach(file ${SB_UNITY_SKIP_${folder}})
        list(APPEND skip ${dir}/${file})
      endforeach()
      if(skip)
        set_source_files_properties(${skip} DIRECTORY ${dir}
                                    PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
      endif()
    endforeach()
  endforeach()
endfunction()
