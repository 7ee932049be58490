# Foundation (issue 2): SDK types, discovery, routing, environment, the CLI
# with the none plugin, and an out-of-tree backend built against the installed SDK.

# Fixture plugins, each scenario in its own directory.
function(ccsandbox_fixture_plugin target dir)
  cmake_parse_arguments(ARG "" "" "DEFINES" ${ARGN})
  ccsandbox_add_backend(${target} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/fixture_backend.cpp)
  target_compile_definitions(${target} PRIVATE ${ARG_DEFINES})
  set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${FIXTURE_OUT}/${dir})
endfunction()

ccsandbox_fixture_plugin(fixture-native-ok native-ok DEFINES
  FIXTURE_NAME="fixture-native" FIXTURE_BACKEND="native" FIXTURE_AVAILABLE=1
  FIXTURE_NOTE="fixture — namespace isolation, no kernel boundary" FIXTURE_HINT="")
ccsandbox_fixture_plugin(fixture-native-off native-off DEFINES
  FIXTURE_NAME="fixture-native" FIXTURE_BACKEND="native" FIXTURE_AVAILABLE=0
  FIXTURE_NOTE="" FIXTURE_HINT="install fixture-tools: sudo apt-get install fixture-tools")
ccsandbox_fixture_plugin(fixture-abi99 bad DEFINES
  FIXTURE_NAME="fixture-future" FIXTURE_BACKEND="native" FIXTURE_AVAILABLE=1
  FIXTURE_NOTE="" FIXTURE_HINT="" FIXTURE_ABI_MAJOR=99)
ccsandbox_fixture_plugin(fixture-dup-a bad DEFINES
  FIXTURE_NAME="fixture-dup" FIXTURE_BACKEND="microvm" FIXTURE_AVAILABLE=1
  FIXTURE_NOTE="first" FIXTURE_HINT="")
ccsandbox_fixture_plugin(fixture-dup-b bad DEFINES
  FIXTURE_NAME="fixture-dup" FIXTURE_BACKEND="microvm" FIXTURE_AVAILABLE=1
  FIXTURE_NOTE="second" FIXTURE_HINT="")
add_library(not-a-plugin MODULE ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/not_a_plugin.cpp)
set_target_properties(not-a-plugin PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${FIXTURE_OUT}/bad)
# The none plugin alone, whatever else this build makes: runtime tests must
# not depend on which native backends the host offers.
add_custom_target(fixture-none-only
  COMMAND ${CMAKE_COMMAND} -E make_directory ${FIXTURE_OUT}/none-only
  COMMAND ${CMAKE_COMMAND} -E create_symlink $<TARGET_FILE:ccsandbox-none>
          ${FIXTURE_OUT}/none-only/$<TARGET_FILE_NAME:ccsandbox-none>
  DEPENDS ccsandbox-none)
set(CCSANDBOX_FIXTURE_PLUGINS fixture-none-only fixture-native-ok fixture-native-off fixture-abi99 fixture-dup-a
  fixture-dup-b not-a-plugin)

ccsandbox_add_test(sdk_types_test SOURCES sdk_types_test.cpp LABELS foundation)
ccsandbox_add_test(env_sanitizer_test SOURCES env_sanitizer_test.cpp LABELS foundation)
ccsandbox_add_test(router_test SOURCES router_test.cpp LABELS foundation)
ccsandbox_add_test(discovery_test SOURCES discovery_test.cpp support/log_capture.cpp LABELS foundation)
add_dependencies(discovery_test ccsandbox-none ccsandbox-cli ccsandbox ccsandbox-connect
  ${CCSANDBOX_FIXTURE_PLUGINS})
target_compile_definitions(discovery_test PRIVATE
  CCSANDBOX_CLI_LINKS_SHARED_CORE=$<NOT:$<BOOL:${CCSANDBOX_STATIC_CORE_IN_CLI}>>
  CCSANDBOX_STATIC_CXX_RUNTIME=$<BOOL:${CCSANDBOX_STATIC_CXX_RUNTIME}>
  $<$<TARGET_EXISTS:ccsandbox-native-bwrap>:CCSANDBOX_HAS_NATIVE_BWRAP>
  CCSANDBOX_SHARED_CORE="$<TARGET_FILE:ccsandbox>")
ccsandbox_add_test(runtime_test SOURCES runtime_test.cpp support/log_capture.cpp LABELS foundation)
add_dependencies(runtime_test ccsandbox-none ${CCSANDBOX_FIXTURE_PLUGINS})
ccsandbox_add_test(cli_none_test SOURCES cli_none_test.cpp LABELS foundation)
add_dependencies(cli_none_test ccsandbox-cli ccsandbox-none)
ccsandbox_add_test(out_of_tree_backend_test SOURCES out_of_tree_backend_test.cpp LABELS foundation)
add_dependencies(out_of_tree_backend_test ccsandbox-cli ccsandbox-none)

# The C API through the exported library only, with a client compiled as C.
add_executable(c_api_test c_api_test.cpp c_api_client.c)
ccsandbox_link_shared_core(c_api_test)
target_link_libraries(c_api_test PRIVATE Boost::unit_test_framework)
target_compile_definitions(c_api_test PRIVATE BOOST_TEST_DYN_LINK ${CCSANDBOX_TEST_DEFINITIONS})
add_dependencies(c_api_test fixture-none-only)
add_test(NAME c_api_test COMMAND c_api_test --report_level=short)
set_tests_properties(c_api_test PROPERTIES LABELS foundation)

# The probe cache (backend ABI 1.1): a backend that records its probes, and the
# same backend exporting an ABI 1.0 table.
ccsandbox_add_backend(fixture-kept SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/kept_probe_backend.cpp)
set_target_properties(fixture-kept PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${FIXTURE_OUT}/kept)
ccsandbox_add_backend(fixture-kept-abi10 SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/kept_probe_backend.cpp)
target_compile_definitions(fixture-kept-abi10 PRIVATE FIXTURE_ABI10)
set_target_properties(fixture-kept-abi10 PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${FIXTURE_OUT}/kept-abi10)
ccsandbox_add_test(probe_cache_test SOURCES probe_cache_test.cpp support/log_capture.cpp LABELS foundation)
add_dependencies(probe_cache_test fixture-kept fixture-kept-abi10)
ccsandbox_add_test(plugin_descriptions_test SOURCES plugin_descriptions_test.cpp
  support/log_capture.cpp LABELS foundation)
add_dependencies(plugin_descriptions_test fixture-kept fixture-native-ok not-a-plugin)
ccsandbox_add_test(runtime_dir_test SOURCES runtime_dir_test.cpp LABELS foundation)
