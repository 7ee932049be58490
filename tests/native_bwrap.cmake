# The Linux native backend (issue 5): the mount plan on its own, then real
# bubblewrap sandboxes through the plugin, the Runtime and the CLI.
if(NOT TARGET ccsandbox-native-bwrap)
  return()
endif()

ccsandbox_add_test(native_bwrap_mount_plan_test SOURCES native_bwrap_mount_plan_test.cpp
  LIBS ccsandbox_bwrap_mount_plan LABELS native-bwrap)

# Real sandboxes; each suite runs as root and again as an unprivileged user.
function(native_bwrap_suite name)
  ccsandbox_add_test(${name} SOURCES ${name}.cpp ${ARGN} LABELS native-bwrap)
  add_dependencies(${name} ccsandbox-native-bwrap ccsandbox-bwrap-helper ccsandbox-none ccsandbox-cli)
  add_test(NAME ${name}_unprivileged
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/native_bwrap_unprivileged.sh $<TARGET_FILE:${name}>
            --report_level=short)
  set_tests_properties(${name} ${name}_unprivileged PROPERTIES LABELS native-bwrap TIMEOUT 300)
endfunction()

native_bwrap_suite(native_bwrap_runtime_test)
native_bwrap_suite(native_bwrap_plugin_test support/log_capture.cpp)
native_bwrap_suite(native_bwrap_cli_test)
native_bwrap_suite(native_bwrap_supervised_test)
ccsandbox_add_test(native_bwrap_violation_scanner_test SOURCES native_bwrap_violation_scanner_test.cpp
  LABELS native-bwrap)
