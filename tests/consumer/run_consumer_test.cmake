# ctest driver (cmake -P): install the build tree into a fresh prefix, then
# configure, build and run tests/consumer against it.
#   -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=...
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumer_test.cmake needs -D${var}=...")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# The install exposes only the public headers (jax2onnx/*.h), none of the
# project's internal ones.
file(GLOB_RECURSE installed_headers RELATIVE ${prefix}/include
  ${prefix}/include/*)
if(NOT installed_headers)
  message(FATAL_ERROR "no headers installed under ${prefix}/include")
endif()
foreach(header ${installed_headers})
  if(NOT header MATCHES "^jax2onnx/[^/]+\\.h$")
    message(FATAL_ERROR "internal header installed: include/${header}")
  endif()
endforeach()

# One library, no project-internal archives (libir.a, libjaxpr_*.a, ...).
file(GLOB installed_libs RELATIVE ${prefix} ${prefix}/lib*/lib*)
if(NOT installed_libs MATCHES "^lib[^/;]*/libjax2onnx\\.(a|so)$")
  message(FATAL_ERROR "the install should hold one library libjax2onnx, "
                      "holds: ${installed_libs}")
endif()
# Users need neither glog's nor gflags' CMake package.
file(GLOB_RECURSE package_files ${prefix}/lib*/cmake/jax2onnx/*.cmake)
foreach(f ${package_files})
  file(READ ${f} text)
  if(text MATCHES "find_(dependency|package)\\((glog|gflags)|glog::|gflags::")
    message(FATAL_ERROR "${f} pulls glog/gflags into users")
  endif()
endforeach()
# No debug info in the library or the CLI (JAX2ONNX_INSTALL_STRIP).
find_program(READELF readelf)
if(READELF)
  foreach(f ${prefix}/${installed_libs} ${prefix}/bin/jax2onnx)
    execute_process(COMMAND ${READELF} -S --wide ${f} OUTPUT_VARIABLE sections)
    if(sections MATCHES "\\.debug_info")
      message(FATAL_ERROR "${f} carries debug info")
    endif()
  endforeach()
endif()
# `check` finds the runner installed next to the binary; without its npm
# dependency it names the command that installs it there.
if(NOT EXISTS ${prefix}/share/jax2onnx/ort/runner.js OR
   NOT EXISTS ${prefix}/share/jax2onnx/ort/package-lock.json)
  message(FATAL_ERROR "the ONNX Runtime runner is not installed under share/")
endif()
find_program(NODE node)
if(NODE)
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env --unset=JAX2ONNX_ORT_DIR
    ${prefix}/bin/jax2onnx check ${SOURCE_DIR}/testdata/examples/mlp/mlp.jaxpr
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(FIND "${err}" "cd ${prefix}/share/jax2onnx/ort && npm ci --ignore-scripts" hint)
if(rc EQUAL 0 OR hint EQUAL -1)
  message(FATAL_ERROR "`check` without node_modules should fail naming "
                      "`cd ${prefix}/share/jax2onnx/ort && npm ci "
                      "--ignore-scripts`; rc ${rc}: ${err}")
endif()
endif()

# The CLI is installed too.
run(${prefix}/bin/jax2onnx --version)
if(NOT last_output MATCHES "^jax2onnx [0-9]+\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "unexpected `jax2onnx --version`: ${last_output}")
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/build
  -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer
  ${SOURCE_DIR}/testdata/examples/mlp/mlp.jaxpr)
message(STATUS "${last_output}")
file(SIZE ${WORK_DIR}/build/consumer consumer_size)
message(STATUS "consumer binary: ${consumer_size} bytes")
if(NOT last_output MATCHES "converted .*: [1-9][0-9]* nodes.*in memory: [1-9][0-9]* nodes")
  message(FATAL_ERROR "unexpected consumer output: ${last_output}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
