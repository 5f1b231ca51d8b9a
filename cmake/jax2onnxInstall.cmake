# Install rules and the CMake package: after `cmake --install BUILD --prefix P`
# another project can `find_package(jax2onnx)` (with P in CMAKE_PREFIX_PATH)
# and link `jax2onnx::jax2onnx` (the public API, jax2onnx/jax2onnx.h).
# Included from the top-level CMakeLists.txt after every library exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(JAX2ONNX_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/jax2onnx)

# Every project library the public API links, in dependency order.
set(JAX2ONNX_INSTALLED_LIBS
  jaxpr_model jax2onnx_stablehlo jaxpr_text jaxpr_io jaxpr_typecheck jaxpr_eval ir jax2onnx_plugin
  jax2onnx_converter jax2onnx_converter2 jax2onnx_plugins jax2onnx_plugins2
  jax2onnx_ort jax2onnx_api)
foreach(lib ${JAX2ONNX_INSTALLED_LIBS})
  if(NOT TARGET ${lib})
    message(FATAL_ERROR "jax2onnx install: library target ${lib} is missing")
  endif()
endforeach()

# The headers a consumer compiles: the public ones only. They include
# nothing of the project but each other (absl, onnx and the standard
# library otherwise); tests/consumer checks the installed include dir.
file(GLOB _j2o_public_headers
  ${CMAKE_SOURCE_DIR}/api/include/jax2onnx/*.h)
install(FILES ${_j2o_public_headers}
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/jax2onnx COMPONENT jax2onnx)

# The command line tool.
if(TARGET jax2onnx)
  install(TARGETS jax2onnx RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    COMPONENT jax2onnx)
endif()

# The umbrella target consumers link.
add_library(jax2onnx_public INTERFACE)
set_target_properties(jax2onnx_public PROPERTIES EXPORT_NAME jax2onnx)
target_link_libraries(jax2onnx_public INTERFACE jax2onnx_api)
target_include_directories(jax2onnx_public INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# A sanitizer (or libFuzzer) build's static libraries call the ASan/UBSan
# runtimes: a consumer must link with the same flags (tests/consumer in
# scripts/sanitize.sh).
if(JAX2ONNX_SANITIZE OR JAX2ONNX_FUZZ)
  target_link_options(jax2onnx_public INTERFACE
    -fsanitize=address,undefined)
endif()
add_library(jax2onnx::jax2onnx ALIAS jax2onnx_public)

install(TARGETS ${JAX2ONNX_INSTALLED_LIBS} jax2onnx_public
  EXPORT jax2onnxTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT jax2onnx
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT jax2onnx
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
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
