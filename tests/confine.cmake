# The kernel layers of the Linux native backend (plugins/native-bwrap/confine):
# suites drive the library directly, the test process acting as the helper.
if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux" OR NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  return()
endif()
if(NOT TARGET ccsandbox_confine)
  add_subdirectory(${PROJECT_SOURCE_DIR}/plugins/native-bwrap/confine
                   ${CMAKE_CURRENT_BINARY_DIR}/confine-library)
endif()

# Small C programs the adversarial suite runs under confinement.
# They are the attacker, not the code under test, and they run confined: a
# sanitizer runtime in them would need ptrace (LeakSanitizer), which the
# confinement refuses, so they are always built without one.
foreach(program io_uring_open racing_threads tmpfile_link side_doors)
  add_executable(confine_${program} confine_programs/${program}.c)
  target_link_libraries(confine_${program} PRIVATE Threads::Threads)
  target_compile_options(confine_${program} PRIVATE -fno-sanitize=all)
  target_link_options(confine_${program} PRIVATE -fno-sanitize=all)
endforeach()

set(CCSANDBOX_CONFINE_PROGRAMS
  CONFINE_IO_URING_OPEN="$<TARGET_FILE:confine_io_uring_open>"
  CONFINE_RACING_THREADS="$<TARGET_FILE:confine_racing_threads>"
  CONFINE_TMPFILE_LINK="$<TARGET_FILE:confine_tmpfile_link>"
  CONFINE_SIDE_DOORS="$<TARGET_FILE:confine_side_doors>")

ccsandbox_add_test(confine_rules_test SOURCES confine_rules_test.cpp LIBS ccsandbox_confine
  LABELS confine)
ccsandbox_add_test(confine_kernel_layers_test
  SOURCES confine_kernel_layers_test.cpp confine_programs/confine_harness.cpp LIBS ccsandbox_confine LABELS confine)
ccsandbox_add_test(confine_adversarial_test
  SOURCES confine_adversarial_test.cpp confine_programs/confine_harness.cpp LIBS ccsandbox_confine LABELS confine)
ccsandbox_add_test(confine_ordinary_work_test
  SOURCES confine_ordinary_work_test.cpp confine_programs/confine_harness.cpp LIBS ccsandbox_confine LABELS confine)
foreach(suite confine_kernel_layers_test confine_adversarial_test confine_ordinary_work_test)
  target_compile_definitions(${suite} PRIVATE ${CCSANDBOX_CONFINE_PROGRAMS})
  add_dependencies(${suite} confine_io_uring_open confine_racing_threads confine_tmpfile_link
    confine_side_doors)
  # The same suite as an unprivileged user: the supervisor needs no privilege.
  add_test(NAME ${suite}_unprivileged
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/confine_programs/run_unprivileged.sh $<TARGET_FILE:${suite}>
            --report_level=short)
  set_tests_properties(${suite}_unprivileged PROPERTIES LABELS confine)
endforeach()

# The unit suite also reaches the library's internal headers (the judge).
target_include_directories(confine_rules_test PRIVATE
  ${PROJECT_SOURCE_DIR}/plugins/native-bwrap/confine/src)

# A development tool, not a test: the supervisor's CPU time per notification
# on the create-heavy and compile-style workloads of bench/supervisor.sh.
add_executable(confine_supervisor_cost confine_programs/supervisor_cost.cpp
  confine_programs/confine_harness.cpp)
target_link_libraries(confine_supervisor_cost PRIVATE ccsandbox_confine Threads::Threads)
target_include_directories(confine_supervisor_cost PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
