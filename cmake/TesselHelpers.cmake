# Shared CMake helpers: warnings, sanitizers, test registration, CLI command registration.

# Warnings for Tessel's own targets (third-party headers come in as SYSTEM includes).
function(tessel_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
      -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough>)
  if(TESSEL_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()

# TESSEL_NO_SANITIZE (the asan preset: null,alignment): UBSan's null and alignment checks are
# most of its check sites, each with a static source location holding pointers. In shared
# libraries every such pointer is a relocation the loader applies at each process start: with
# them an instrumented test executable or `tessel` started in 0.4-1.2 s (5.8 M relocations, ~250
# MB of data paged in), and the ASan leg starts ~1,800 processes (one per test case, the hostile
# suite's and the sweep tests' children). A null dereference still stops under ASan (SEGV
# report with its stack); the fuzzers (scripts/run-fuzzers.sh, clang) keep every UBSan check on
# the readers of untrusted bytes, where a misaligned load could come from.
if(TESSEL_SANITIZE)
  add_compile_options(-fsanitize=${TESSEL_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${TESSEL_SANITIZE})
  if(TESSEL_NO_SANITIZE)
    add_compile_options(-fno-sanitize=${TESSEL_NO_SANITIZE})
  endif()
endif()

# Debug information is written compressed (zlib) in objects: the same information for gdb and
# sanitizer reports, about a third of the disk (a CI machine's disk is small; two build trees
# with -g ran one out). Executables are linked uncompressed: compressing a 200 MB executable's
# debug sections tripled its link's CPU time (tessel: 12 s -> 4 s without; ~60 links per tree),
# and the executables are a small part of a tree (~2.3 GB uncompressed in build/default).
# Only for the host compilers, not nvcc. The default preset writes `-g1` (line tables: file and
# line in backtraces, sanitizer reports and profiles, no variables or types): full `-g` cost ~30%
# more compile CPU (codegen/codegen.cpp 4.5 -> 6.1 CPU-s, tests/sim/faults_test.cpp 8.0 -> 10.8),
# which CI pays twice over ~480 targets.
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag(-gz TESSEL_HAVE_GZ)
if(TESSEL_HAVE_GZ)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-gz>)
endif()

# add_subdirectory(dir) when dir/CMakeLists.txt exists (modules land one at a time).
macro(tessel_add_module_if_present dir)
  if(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${dir}/CMakeLists.txt")
    add_subdirectory(${dir})
  endif()
endmacro()

# tessel_add_library(name SOURCES ... [DEPS ...] [PRIVATE_DEPS ...])
# A library with the project's include root and warnings: static, or shared under
# TESSEL_SHARED_LIBS (the asan preset: ~50 test executables each linking its own instrumented
# copy of the libraries filled a CI machine's disk).
function(tessel_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  if(TESSEL_SHARED_LIBS)
    add_library(${name} SHARED ${ARG_SOURCES})
  else()
    add_library(${name} STATIC ${ARG_SOURCES})
  endif()
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  tessel_set_warnings(${name})
endfunction()

# tessel_register_cli(name SOURCES ... DEPS ...)
# The module that owns a subcommand registers it here; the `tessel` executable links every
# registered object library, whose static initialisers add the subcommands (no central switch).
function(tessel_register_cli name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} OBJECT ${ARG_SOURCES})
  target_link_libraries(${name} PUBLIC tessel_support ${ARG_DEPS})
  tessel_set_warnings(${name})
  set_property(GLOBAL APPEND PROPERTY TESSEL_CLI_LIBRARIES ${name})
endfunction()

# tessel_add_gtest(name SOURCES ... [DEPS ...] [LABELS unit|slow|rtl|gpu ...] [TIMEOUT s])
# One GoogleTest executable; each TEST becomes a CTest test carrying the labels. A CLI object
# library in DEPS (`tessel_*_cli`) is linked in whole, with its own dependencies.
# Tests that GTEST_SKIP (e.g. `gpu` without a device) are reported by CTest as skipped.
function(tessel_add_gtest name)
  # SERIAL: ctest runs these tests alone (RUN_SERIAL), for tests that need the second core.
  cmake_parse_arguments(ARG "SERIAL" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(TESSEL_TEST_LABELS)  # e.g. the asan preset builds only what its test preset runs
    set(wanted FALSE)
    foreach(label IN LISTS ARG_LABELS)
      if(label IN_LIST TESSEL_TEST_LABELS)
        set(wanted TRUE)
      endif()
    endforeach()
    if(NOT wanted)
      return()
    endif()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  # Test code at -O1 in the optimised builds: the work is in the libraries (-O2), and GoogleTest's
  # macro-heavy sources cost ~25% less CPU to compile (a large test unit 16.5 -> 12.5 CPU-s).
  target_compile_options(${name} PRIVATE $<$<CONFIG:RelWithDebInfo,Release>:-O1>)
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
  target_compile_definitions(${name} PRIVATE
    TESSEL_SOURCE_DIR="${PROJECT_SOURCE_DIR}" TESSEL_BINARY_DIR="${PROJECT_BINARY_DIR}")
  tessel_set_warnings(${name})
  if(NOT TESSEL_TEST_PER_CASE)
    tessel_add_gtest_shards(${name} "${ARG_LABELS}" ${ARG_SERIAL})
    return()
  endif()
  gtest_discover_tests(${name}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} RUN_SERIAL ${ARG_SERIAL}
               SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endfunction()

# TESSEL_TEST_PER_CASE OFF (the asan preset): TESSEL_TEST_SHARDS CTest tests per executable, each
# running its share of the cases in one process (GoogleTest's sharding), instead of one process
# per case. Under ASan an instrumented executable takes 0.1-0.9 s to start: ~1,500 cases cost
# ~640 CPU-s of starts alone (session 32), about half the leg. A failing shard's output names
# the failing cases (--gtest_brief prints only those); a skipped case passes its shard. A shard
# is bounded at 30 min (its cases' own TIMEOUT no longer applies one by one).
function(tessel_add_gtest_shards name labels serial)
  math(EXPR last "${TESSEL_TEST_SHARDS} - 1")
  foreach(shard RANGE ${last})
    add_test(NAME ${name}.shard${shard} COMMAND ${name} --gtest_brief=1
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(${name}.shard${shard} PROPERTIES
      LABELS "${labels}" TIMEOUT 1800 RUN_SERIAL ${serial}
      ENVIRONMENT "GTEST_TOTAL_SHARDS=${TESSEL_TEST_SHARDS};GTEST_SHARD_INDEX=${shard}")
  endforeach()
endfunction()

# The C++ flags of Verilator's generated model sources, appended after the build type's, for
# verilate(... ${TESSEL_VERILATED_CXX_FLAGS}): the "slow" classes (construction, initial blocks
# and settling, run once per model) at -O0 and the evaluation ("fast") classes at the build
# type's optimisation, both without debug information (generated C++ is debugged through its
# SystemVerilog and FST traces; the hand-written harness keeps -g). Issue 38: the slow files
# of the edge-small model cost 5.3 CPU-s at -O2 -g and 1.8 at -O0 -g0 each.
set(TESSEL_VERILATED_CXX_FLAGS OPT_SLOW -O0 -g0 OPT_FAST -g0)

# The generated config package of a Verilator model: writes the rule that runs tessel_hwgen_tool
# on YAML (relative to the source root) into PKG_DIR/tessel_cfg_pkg.sv. verilate() runs
# Verilator at configure time, before tessel_hwgen_tool exists, so a placeholder dated 1970
# (hw/harness/placeholder_cfg_pkg.sv) stands in until the rule replaces it at build time. The
# package is written aside and copied only when it changed, so that relinking the tool (every
# version stamp) does not re-verilate the models.
function(tessel_rtl_config_package pkg_dir yaml label)
  if(NOT EXISTS ${pkg_dir}/tessel_cfg_pkg.sv)
    file(MAKE_DIRECTORY ${pkg_dir})
    configure_file(${PROJECT_SOURCE_DIR}/hw/harness/placeholder_cfg_pkg.sv
                   ${pkg_dir}/tessel_cfg_pkg.sv COPYONLY)
    execute_process(COMMAND touch -d @0 ${pkg_dir}/tessel_cfg_pkg.sv)
  endif()
  add_custom_command(
    OUTPUT ${pkg_dir}/tessel_cfg_pkg.sv
    COMMAND tessel_hwgen_tool ${PROJECT_SOURCE_DIR}/${yaml} ${pkg_dir}/new
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${pkg_dir}/new/tessel_cfg_pkg.sv
            ${pkg_dir}/tessel_cfg_pkg.sv
    DEPENDS tessel_hwgen_tool ${PROJECT_SOURCE_DIR}/${yaml}
    COMMENT "tessel_cfg_pkg.sv for ${label}")
endfunction()
