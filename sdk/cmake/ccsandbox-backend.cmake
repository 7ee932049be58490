# ccsandbox_add_backend(<target> SOURCES <files>...)
# A backend plugin: a MODULE library linked to the SDK, exporting only the
# `ccsandbox_backend_v1` table, named lib<target>.so.
function(ccsandbox_add_backend target)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES} ${CCSANDBOX_SDK_JSON_IMPL})
  target_link_libraries(${target} PRIVATE ccsandbox::sdk)
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  # Unresolved symbols are a build error, not a load-time surprise.
  target_link_options(${target} PRIVATE "LINKER:--no-undefined")
endfunction()
