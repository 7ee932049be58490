# The policy compiler (issue 3): SandboxSpec -> EffectivePolicy, precedence as
# properties over generated trees, the golden standard policy, `ccsandbox policy`.

# Records the policy a launch hands its backend; kept out of the shared plugin
# directory so no other suite sees it.
ccsandbox_add_backend(ccsandbox-policy-recorder
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/policy_recorder_backend.cpp)
set_target_properties(ccsandbox-policy-recorder PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/policy-recorder)

ccsandbox_add_test(policy_compiler_test SOURCES policy_compiler_test.cpp LABELS policy)
ccsandbox_add_test(policy_properties_test SOURCES policy_properties_test.cpp LABELS policy)
ccsandbox_add_test(policy_cli_test SOURCES policy_cli_test.cpp LABELS policy)
target_compile_definitions(policy_cli_test PRIVATE
  CCSANDBOX_POLICY_RECORDER_DIR="${CMAKE_CURRENT_BINARY_DIR}/policy-recorder")
add_dependencies(policy_cli_test ccsandbox-cli ccsandbox-none ccsandbox-policy-recorder)
