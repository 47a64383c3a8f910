# telos_add_library(NAME <module> SOURCES ... DEPS ... [PRIVATE_DEPS ...])
#   Builds the library telos_<module> (alias telos::<module>). Its only public include
#   directory is src/<module>/include; everything else in the folder is private.
function(telos_add_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target telos_${ARG_NAME})
  add_library(${target} STATIC ${ARG_SOURCES})
  add_library(telos::${ARG_NAME} ALIAS ${target})
  target_include_directories(${target} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
                                       PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${target} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  target_compile_options(${target} PRIVATE ${TELOS_WARNING_FLAGS})
endfunction()

# telos_add_test(NAME <name> SOURCES ... DEPS ... LABELS unit|integration|e2e|slow
#                [ENVIRONMENT VAR=value ...] [TIMEOUT seconds])
#   Builds a GoogleTest binary and registers each of its tests with ctest under the labels.
function(telos_add_test)
  cmake_parse_arguments(ARG "" "NAME;TIMEOUT" "SOURCES;DEPS;LABELS;ENVIRONMENT" ${ARGN})
  if(NOT ARG_LABELS)
    message(FATAL_ERROR "telos_add_test(${ARG_NAME}): LABELS is required")
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock
                                            GTest::gtest_main)
  target_include_directories(${ARG_NAME} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                                                 ${PROJECT_SOURCE_DIR}/tests/support)
  target_compile_options(${ARG_NAME} PRIVATE ${TELOS_WARNING_FLAGS})
  gtest_discover_tests(${ARG_NAME}
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} ENVIRONMENT "${ARG_ENVIRONMENT}"
    DISCOVERY_TIMEOUT 60)
endfunction()

# telos_add_benchmark(NAME <name> SOURCES ... DEPS ...)
function(telos_add_benchmark)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} benchmark::benchmark)
  target_compile_options(${ARG_NAME} PRIVATE ${TELOS_WARNING_FLAGS})
endfunction()
