# Writes beamlab's public headers to OUT/beamlab/: the API's roots below and every project
# header they reach, with their includes rewritten to the installed paths, so an outside
# project needs only OUT (or the install's include/) on its include path:
#   engine/api/beamlab/program.hpp  ->  beamlab/program.hpp
#   engine/ir/uop.hpp               ->  beamlab/engine/ir/uop.hpp
#   #include "engine/ir/uop.hpp"    ->  #include <beamlab/engine/ir/uop.hpp>
# A file is rewritten only when its contents change (consumers don't rebuild for nothing), and
# a header no longer reached is removed.
#
#   cmake -DROOT=<source dir> -DOUT=<build dir>/include -P cmake/public_headers.cmake
cmake_minimum_required(VERSION 3.25)
set(roots
  engine/api/beamlab/beamlab.hpp engine/api/beamlab/tuning.hpp
  frontends/expr/expr.hpp frontends/onnx/model.hpp frontends/ir_text/kernel_file.hpp
  tuner/batch/batch.hpp tuner/batch/policy.hpp tuner/batch/session.hpp tuner/store/run.hpp
  db/database.hpp)

# The installed path of a header given by its path in the source tree.
function(installed_path source out)
  if(source MATCHES "^engine/api/(beamlab/.*)$")
    set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  else()
    set(${out} "beamlab/${source}" PARENT_SCOPE)
  endif()
endfunction()

set(queue ${roots})
set(done "")
set(written "")
while(queue)
  list(POP_FRONT queue header)
  if(header IN_LIST done)
    continue()
  endif()
  list(APPEND done ${header})
  if(NOT EXISTS "${ROOT}/${header}")
    message(FATAL_ERROR "public_headers: ${header} is included but missing from ${ROOT}")
  endif()
  file(STRINGS "${ROOT}/${header}" includes REGEX "^#include [\"<]")
  foreach(line IN LISTS includes)
    if(line MATCHES "^#include \"([^\"]+)\"")
      list(APPEND queue "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^#include <beamlab/([^>]+)>")
      list(APPEND queue "engine/api/beamlab/${CMAKE_MATCH_1}")
    endif()
  endforeach()
  file(READ "${ROOT}/${header}" text)
  string(REGEX REPLACE "#include \"([^\"]+)\"" "#include <beamlab/\\1>" text "${text}")
  installed_path("${header}" target)
  list(APPEND written "${OUT}/${target}")
  set(old "")
  if(EXISTS "${OUT}/${target}")
    file(READ "${OUT}/${target}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${OUT}/${target}" "${text}")
  endif()
endwhile()

file(GLOB_RECURSE present "${OUT}/beamlab/*")
foreach(f IN LISTS present)
  if(NOT f IN_LIST written)
    file(REMOVE "${f}")
  endif()
endforeach()
