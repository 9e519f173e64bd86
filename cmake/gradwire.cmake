# Target helpers: every library, executable and test of the project is made
# by one of these, so the warning flags are set in one place.
#
#   gw_add_library(NAME SOURCES...)        static library
#   gw_add_executable(NAME SOURCES...)     executable (tools, benchmarks)
#   gw_add_test(NAME SOURCES... [DISCOVERY_TIMEOUT S])
#                                          GoogleTest executable linked with
#                                          gtest_main, its tests registered
#                                          with ctest (gtest_discover_tests)
#
# Libraries, include directories and definitions are added by the caller with
# the usual target_* commands.

set(GW_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
# nvcc forwards host warnings to the host compiler; -Wpedantic is left out
# for .cu files: nvcc's generated host code uses GNU line markers.
set(GW_CUDA_HOST_LIST ${GW_WARNINGS})
list(REMOVE_ITEM GW_CUDA_HOST_LIST -Wpedantic)
string(REPLACE ";" "," GW_CUDA_HOST_WARNINGS "${GW_CUDA_HOST_LIST}")

# The warning flags for one target, by source language.
function(gw_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${GW_WARNINGS}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${GW_CUDA_HOST_WARNINGS}>)
endfunction()

function(gw_add_library name)
  add_library(${name} STATIC ${ARGN})
  gw_target_warnings(${name})
endfunction()

function(gw_add_executable name)
  add_executable(${name} ${ARGN})
  gw_target_warnings(${name})
endfunction()

function(gw_add_test name)
  cmake_parse_arguments(GW_TEST "" "DISCOVERY_TIMEOUT" "" ${ARGN})
  add_executable(${name} ${GW_TEST_UNPARSED_ARGUMENTS})
  gw_target_warnings(${name})
  target_link_libraries(${name} PRIVATE GTest::gtest_main)
  # Tests read their data from the source tree; tests/common holds the
  # helpers shared by all areas (running an executable, synthetic inputs).
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
  target_compile_definitions(${name} PRIVATE GW_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(GW_TEST_DISCOVERY_TIMEOUT)
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT ${GW_TEST_DISCOVERY_TIMEOUT})
  else()
    gtest_discover_tests(${name})
  endif()
endfunction()
