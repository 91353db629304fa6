-- dclua-0.1.0-1.rockspec: the `dc` module (dc.so) for LuaRocks.
--   luarocks --lua-version 5.4 make rockspec/dclua-0.1.0-1.rockspec
-- from the top of the source tree. It builds the module with CMake in
-- build.luarocks/ (or in $DCLUA_ROCK_BUILD) and installs dc.so alone (the
-- CMake install component lua_module); dc.so carries the engine
-- statically, so the rock needs nothing else. Needs CMake >= 3.20, a C11
-- compiler and the Lua 5.4 headers (Debian: liblua5.4-dev).
rockspec_format = "3.0"
package = "dclua"
version = "0.1.0-1"
source = {
   url = "git+https://example.invalid/dclua.git",
   tag = "v0.1.0",
}
description = {
   summary = "Lua-scripted compute engine: devices, buffers, kernels, graphs",
   detailed = [[
The dc module drives the dclua compute engine from Lua 5.4: compute
devices (a CPU device always, CUDA GPUs found at run time), typed
buffers, kernels written in OpenCL C and compiled at run time, streams,
events, and dependency graphs with retry policies.]],
   license = "MIT",
}
dependencies = {
   "lua == 5.4",
}
build = {
   type = "command",
   build_command = [[
b="${DCLUA_ROCK_BUILD:-build.luarocks}" &&
cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release -DDC_BUILD_TESTS=OFF \
  -DDC_BUILD_BENCH=OFF -DDC_BUILD_EXAMPLES=OFF \
  "-DLUA_INCLUDE_DIR=$(LUA_INCDIR)" "-DDC_INSTALL_LUA_CMOD_DIR=$(LIBDIR)" &&
cmake --build "$b" --target dc_lua_module -j "$(nproc 2>/dev/null || echo 2)"
]],
   install_command = [[
cmake --install "${DCLUA_ROCK_BUILD:-build.luarocks}" --component lua_module
]],
}
