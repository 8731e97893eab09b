# Writes OUT: a header defining NEMOC_SOURCE_DIGEST, a digest of the compiler's
# sources (compiler/*.cc and *.h, tests excluded). Build stamps include it, so a
# rebuilt nemoc with different code never trusts trees an older one made.
# Run as: cmake -DSRC=<source dir> -DOUT=<header> -P source_digest.cmake
file(GLOB files "${SRC}/compiler/*.cc" "${SRC}/compiler/*.h")
list(FILTER files EXCLUDE REGEX "_(perf)?test\\.cc$")
list(SORT files)
set(all "")
foreach(f IN LISTS files)
  file(SHA256 "${f}" h)
  get_filename_component(name "${f}" NAME)
  string(APPEND all "${name} ${h}\n")
endforeach()
string(SHA256 digest "${all}")
string(SUBSTRING "${digest}" 0 16 digest)
set(content "#define NEMOC_SOURCE_DIGEST \"${digest}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
