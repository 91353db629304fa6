# run_install_test.cmake: cmake -P script behind the install.host test.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc
    OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "ok: ${ARGN}\n${out}")
endfunction()

run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")

# 1. A CMake host: find_package(dc) and both library flavours.
# With Lua, the same project also builds examples/c/embed_host.c against
# dc::lua (find_package(dc COMPONENTS lua)).
set(embed_arg "")
if(WITH_LUA)
  set(embed_arg -DEMBED_SOURCE=${EMBED_SOURCE})
endif()
run(${CMAKE_COMMAND} -S "${HOST_DIR}" -B "${WORK_DIR}/cmake-host"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER}
    ${embed_arg})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/cmake-host")
run("${WORK_DIR}/cmake-host/host_shared")
run("${WORK_DIR}/cmake-host/host_static")
if(WITH_LUA)
  # Links the shared libdclua.so and libdc.so: found through the RUNPATH
  # CMake gives a build tree.
  run("${WORK_DIR}/cmake-host/embed_host" "${EMBED_SCRIPT}")
endif()

# 2. A plain compiler line through pkg-config.
file(GLOB pc_file "${prefix}/lib*/pkgconfig/dc.pc" "${prefix}/lib/*/pkgconfig/dc.pc")
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
execute_process(COMMAND pkg-config --cflags --libs dc
  OUTPUT_VARIABLE flags RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config cannot find dc in ${pc_dir}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${C_COMPILER} -std=c11 "${HOST_DIR}/host.c" ${flags}
    -o "${WORK_DIR}/host_pkgconfig")
get_filename_component(lib_dir "${pc_dir}" DIRECTORY)
set(ENV{LD_LIBRARY_PATH} "${lib_dir}")
run("${WORK_DIR}/host_pkgconfig")

if(NOT WITH_LUA)
  return()
endif()

# 3. The embedding host through pkg-config dclua.
execute_process(COMMAND pkg-config --cflags --libs dclua
  OUTPUT_VARIABLE flags RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config cannot find dclua in ${pc_dir}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${C_COMPILER} -std=c11 "${EMBED_SOURCE}" ${flags}
    -o "${WORK_DIR}/embed_host_pkgconfig")
run("${WORK_DIR}/embed_host_pkgconfig" "${EMBED_SCRIPT}")

# 4. The module where a stock lua5.4 looks for it: PREFIX/lib/lua/5.4.
if(NOT EXISTS "${prefix}/lib/lua/5.4/dc.so")
  message(FATAL_ERROR "dc.so is not in ${prefix}/lib/lua/5.4")
endif()
find_program(LUA_EXE NAMES lua5.4)
if(NOT LUA_EXE)
  message(STATUS "SKIP: no lua5.4 here; require(\"dc\") not tried")
  return()
endif()
set(ENV{LUA_CPATH} "${prefix}/lib/lua/5.4/?.so;;")
execute_process(COMMAND "${LUA_EXE}" -e
    "local dc = require('dc') print(dc.version ~= nil)"
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "true")
  message(FATAL_ERROR "lua5.4 cannot require the installed dc (${rc}): "
                      "${out}\n${err}")
endif()
message(STATUS "ok: lua5.4 requires dc from ${prefix}/lib/lua/5.4")
