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
if(NOT last_output MATCHES "converted .*: [1-9][0-9]* nodes.*in memory: [1-9][0-9]* nodes")
  message(FATAL_ERROR "unexpected consumer output: ${last_output}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
