# Install rules and the CMake package: after `cmake --install BUILD --prefix P`
# another project can `find_package(jax2onnx)` (with P in CMAKE_PREFIX_PATH)
# and link `jax2onnx::jax2onnx` (the public API, jax2onnx/jax2onnx.h).
# Included from the top-level CMakeLists.txt after every library exists.
#
# The install holds ONE library, lib/libjax2onnx.a: the object files of every
# project library the public API links (found by walking jax2onnx_api's link
# dependencies, so a new library linked into the API is picked up without
# being named here), without debug info (JAX2ONNX_INSTALL_STRIP). Its
# interface names only the external packages' targets (absl, protobuf, onnx,
# nlohmann_json, libzip, zlib) plus glog as a plain `-lglog`, so
# find_package(jax2onnx) neither needs glog's nor gflags' CMake packages.
# With JAX2ONNX_INSTALL_SHARED=ON it is lib/libjax2onnx.so instead, every
# dependency but those of the public header private to it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

option(JAX2ONNX_INSTALL_STRIP
  "Strip debug info from the installed library and CLI" ON)
option(JAX2ONNX_INSTALL_SHARED
  "Install libjax2onnx as a shared library instead of a static archive" OFF)

set(JAX2ONNX_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/jax2onnx)

# The project's static libraries reachable from jax2onnx_api (depth first,
# dependencies after their users) and every other link item they name.
set(_j2o_project_libs)
set(_j2o_external_deps)
function(_j2o_collect target)
  if(target IN_LIST _j2o_project_libs)
    return()
  endif()
  list(APPEND _j2o_project_libs ${target})
  get_target_property(deps ${target} LINK_LIBRARIES)
  if(NOT deps)
    set(deps)
  endif()
  foreach(dep ${deps})
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
    if(TARGET ${dep})
      get_target_property(imported ${dep} IMPORTED)
      get_target_property(type ${dep} TYPE)
      if(NOT imported AND type STREQUAL "STATIC_LIBRARY")
        _j2o_collect(${dep})  # updates both lists here
        continue()
      endif()
      get_target_property(aliased ${dep} ALIASED_TARGET)
      if(aliased)
        set(dep ${aliased})
      endif()
    endif()
    if(NOT dep IN_LIST _j2o_external_deps)
      list(APPEND _j2o_external_deps ${dep})
    endif()
  endforeach()
  set(_j2o_project_libs ${_j2o_project_libs} PARENT_SCOPE)
  set(_j2o_external_deps ${_j2o_external_deps} PARENT_SCOPE)
endfunction()
_j2o_collect(jax2onnx_api)
set(JAX2ONNX_INSTALLED_LIBS ${_j2o_project_libs} CACHE INTERNAL
  "project libraries combined into the installed libjax2onnx")

# glog (and through it gflags) only as a library to link: users include
# none of their headers.
set(_j2o_interface_deps)
foreach(dep ${_j2o_external_deps})
  if(dep MATCHES "^glog::glog$|^glog$")
    list(APPEND _j2o_interface_deps "$<BUILD_INTERFACE:glog::glog>"
      "$<INSTALL_INTERFACE:glog>")
  elseif(dep MATCHES "^gflags")
    # Not referenced by the libraries' objects (only the CLI parses flags).
  else()
    list(APPEND _j2o_interface_deps ${dep})
  endif()
endforeach()

set(_j2o_objects)
foreach(lib ${_j2o_project_libs})
  list(APPEND _j2o_objects $<TARGET_OBJECTS:${lib}>)
endforeach()
if(JAX2ONNX_INSTALL_SHARED)
  add_library(jax2onnx_library SHARED ${_j2o_objects})
  # The public header names absl's status types and onnx::ModelProto.
  set(_j2o_public_deps)
  set(_j2o_private_deps)
  foreach(dep ${_j2o_interface_deps})
    if(dep MATCHES "^absl::|^onnx$|^protobuf::")
      list(APPEND _j2o_public_deps ${dep})
    elseif(dep MATCHES "glog")
      # The plain library: a target here would be named in the exported
      # IMPORTED_LINK_DEPENDENT_LIBRARIES and need glog's package.
      if(NOT "glog" IN_LIST _j2o_private_deps)
        list(APPEND _j2o_private_deps glog)
      endif()
    else()
      list(APPEND _j2o_private_deps ${dep})
    endif()
  endforeach()
  target_link_libraries(jax2onnx_library PUBLIC ${_j2o_public_deps}
    PRIVATE ${_j2o_private_deps})
else()
  add_library(jax2onnx_library STATIC ${_j2o_objects})
  target_link_libraries(jax2onnx_library INTERFACE ${_j2o_interface_deps})
endif()
set_target_properties(jax2onnx_library PROPERTIES
  OUTPUT_NAME jax2onnx
  EXPORT_NAME jax2onnx
  ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
  LINKER_LANGUAGE CXX)
target_include_directories(jax2onnx_library INTERFACE
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/api/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# A sanitizer (or libFuzzer) build's objects call the ASan/UBSan runtimes: a
# consumer must link with the same flags (tests/consumer in
# scripts/sanitize.sh).
if(JAX2ONNX_SANITIZE OR JAX2ONNX_FUZZ)
  target_link_options(jax2onnx_library INTERFACE -fsanitize=address,undefined)
endif()
add_library(jax2onnx::jax2onnx ALIAS jax2onnx_library)

# The headers a consumer compiles: the public ones only. They include
# nothing of the project but each other (absl, onnx and the standard
# library otherwise); tests/consumer checks the installed include dir.
file(GLOB _j2o_public_headers
  ${CMAKE_SOURCE_DIR}/api/include/jax2onnx/*.h)
install(FILES ${_j2o_public_headers}
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/jax2onnx COMPONENT jax2onnx)

install(TARGETS jax2onnx_library
  EXPORT jax2onnxTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT jax2onnx
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT jax2onnx
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The command line tool, and the ONNX Runtime runner `check` uses (found
# relative to the binary: share/jax2onnx/ort; its node_modules come from
# `npm ci --ignore-scripts` there, docs/install.md).
if(TARGET jax2onnx)
  install(TARGETS jax2onnx RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    COMPONENT jax2onnx)
  install(FILES
    ${CMAKE_SOURCE_DIR}/tools/ort/runner.js
    ${CMAKE_SOURCE_DIR}/tools/ort/package.json
    ${CMAKE_SOURCE_DIR}/tools/ort/package-lock.json
    ${CMAKE_SOURCE_DIR}/tools/ort/README.md
    DESTINATION ${CMAKE_INSTALL_DATADIR}/jax2onnx/ort COMPONENT jax2onnx)
endif()
install(FILES ${CMAKE_SOURCE_DIR}/LICENSE
  DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/jax2onnx COMPONENT jax2onnx)

# No debug info in the install whatever the build type: strip --strip-debug
# keeps an archive's symbol table (cmake --install --strip skips archives).
if(JAX2ONNX_INSTALL_STRIP AND CMAKE_STRIP)
  set(_j2o_strip_files
    "${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:jax2onnx_library>")
  if(TARGET jax2onnx)
    list(APPEND _j2o_strip_files
      "${CMAKE_INSTALL_BINDIR}/$<TARGET_FILE_NAME:jax2onnx>")
  endif()
  foreach(file ${_j2o_strip_files})
    install(CODE "
      set(_j2o_file \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${file}\")
      execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug \"\${_j2o_file}\"
        RESULT_VARIABLE _j2o_rc)
      if(NOT _j2o_rc EQUAL 0)
        message(FATAL_ERROR \"strip --strip-debug \${_j2o_file} failed\")
      endif()" COMPONENT jax2onnx)
  endforeach()
endif()

install(EXPORT jax2onnxTargets
  NAMESPACE jax2onnx::
  DESTINATION ${JAX2ONNX_INSTALL_CMAKEDIR} COMPONENT jax2onnx)

configure_package_config_file(
  ${CMAKE_SOURCE_DIR}/cmake/jax2onnxConfig.cmake.in
  ${CMAKE_BINARY_DIR}/jax2onnxConfig.cmake
  INSTALL_DESTINATION ${JAX2ONNX_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${CMAKE_BINARY_DIR}/jax2onnxConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_BINARY_DIR}/jax2onnxConfig.cmake
  ${CMAKE_BINARY_DIR}/jax2onnxConfigVersion.cmake
  DESTINATION ${JAX2ONNX_INSTALL_CMAKEDIR} COMPONENT jax2onnx)
