# cmake -P: writes OUT (a header) with JAX2ONNX_GIT_HASH, the checkout's
# `git describe --always --dirty --abbrev=12` ("unknown" outside git),
# rewriting it only when the value changed so the CLI relinks only then.
#   -DSOURCE_DIR=... -DOUT=...
execute_process(
  COMMAND git -C ${SOURCE_DIR} describe --always --dirty --abbrev=12
  OUTPUT_VARIABLE hash OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR hash STREQUAL "")
  set(hash unknown)
endif()
set(text "#define JAX2ONNX_GIT_HASH \"${hash}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE ${OUT} "${text}")
