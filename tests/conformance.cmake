# The conformance kit (`ccsandbox conformance`) against our plugins and a liar.
ccsandbox_add_backend(fixture-liar SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/liar_backend.cpp)
set_target_properties(fixture-liar PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${FIXTURE_OUT}/liar)
ccsandbox_add_test(conformance_test SOURCES conformance_test.cpp LABELS foundation)
target_compile_definitions(conformance_test PRIVATE
  CCSANDBOX_LIAR_PLUGIN="$<TARGET_FILE:fixture-liar>"
  CCSANDBOX_NONE_PLUGIN="$<TARGET_FILE:ccsandbox-none>"
  CCSANDBOX_BWRAP_PLUGIN="$<$<TARGET_EXISTS:ccsandbox-native-bwrap>:$<TARGET_FILE:ccsandbox-native-bwrap>>")
add_dependencies(conformance_test ccsandbox-cli ccsandbox-none fixture-liar not-a-plugin)
if(TARGET ccsandbox-native-bwrap)
  add_dependencies(conformance_test ccsandbox-native-bwrap)
endif()
