# ccsandbox_add_backend(<target> SOURCES <files>... [STATIC_CXX_RUNTIME])
# A backend plugin: a MODULE library linked to the SDK, exporting only the
# `ccsandbox_backend_v1` table, named lib<target>.so.
#
# STATIC_CXX_RUNTIME links libstdc++ and libgcc into the plugin with their
# symbols hidden (a private copy): a host whose own runtime is static, like the
# ccsandbox CLI, then never loads libstdc++.so (about 0.6 ms per process). Safe
# because only C crosses the ABI: no exception, allocation or std:: type passes
# between the plugin and the core.
function(ccsandbox_add_backend target)
  cmake_parse_arguments(ARG "STATIC_CXX_RUNTIME" "" "SOURCES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES} ${CCSANDBOX_SDK_JSON_IMPL})
  target_link_libraries(${target} PRIVATE ccsandbox::sdk)
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  # Unresolved symbols are a build error, not a load-time surprise.
  target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  if(ARG_STATIC_CXX_RUNTIME)
    # -Bsymbolic: the plugin's own definitions (template type_info, vtables)
    # bind at link time, not by a search of every loaded object at each load.
    # __cxa_pure_virtual is only weakly referenced, so without --undefined the
    # archive would leave it out and each of its references would be searched
    # for, in vain, at every load.
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc
                        "LINKER:--exclude-libs,ALL" "LINKER:-Bsymbolic"
                        "LINKER:--undefined=__cxa_pure_virtual")
  endif()
endfunction()
