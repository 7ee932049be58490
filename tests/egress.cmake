# Network egress (issue 4): the allowlist language, the shipped lists, the
# resolved-address check, the HTTP and SOCKS5 proxies driven by real curl against
# loopback servers, bad input, and the integration with sessions.
ccsandbox_add_test(egress_matcher_test SOURCES egress_matcher_test.cpp LABELS egress)
ccsandbox_add_test(egress_proxy_test SOURCES egress_proxy_test.cpp LABELS egress)
ccsandbox_add_test(egress_bad_input_test SOURCES egress_bad_input_test.cpp LABELS egress)

# A native test backend that records the policy and applies its env.
ccsandbox_add_backend(egress-recorder SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/egress_recorder_backend.cpp)
set_target_properties(egress-recorder PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fixtures/egress)
ccsandbox_add_test(egress_session_test SOURCES egress_session_test.cpp LABELS egress)
add_dependencies(egress_session_test egress-recorder ccsandbox-none ccsandbox-connect)

# The egress benchmark (bench/egress_bench.cpp): not a test, never timed in
# ctest. Built with the suites because it links the core's objects.
add_executable(egress_bench ${PROJECT_SOURCE_DIR}/bench/egress_bench.cpp)
target_link_libraries(egress_bench PRIVATE ccsandbox_core_objects ccsandbox_logging_shared)

# The same suites as an unprivileged user (fd and pipe-buffer limits apply to
# real users, not to root); as a non-root runner they simply run again.
foreach(suite egress_proxy_test egress_bad_input_test)
  add_test(NAME ${suite}_unprivileged
    COMMAND sh -c "if [ \"$(id -u)\" = 0 ]; then exec setpriv --reuid=65534 --regid=65534 --clear-groups \"$0\" --report_level=short; else exec \"$0\" --report_level=short; fi"
            $<TARGET_FILE:${suite}>)
  set_tests_properties(${suite}_unprivileged PROPERTIES LABELS egress)
endforeach()
