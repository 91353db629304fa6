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
run(${CMAKE_COMMAND} -S "${HOST_DIR}" -B "${WORK_DIR}/cmake-host"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/cmake-host")
run("${WORK_DIR}/cmake-host/host_shared")
run("${WORK_DIR}/cmake-host/host_static")

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
