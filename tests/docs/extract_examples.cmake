# extract_examples.cmake: writes each example block of one Markdown file
# to its own source file. Run in script mode:
#
#   cmake -DDOC=<file.md> -DOUT_DIR=<dir> [-DSTEM=<stem>] [-DLANG=lua|sh]
#         -P extract_examples.cmake
#
# For C (the default) a block starts with a line that is exactly
# "```c example"; with LANG=lua, every block that starts with a line that
# is exactly "```lua" is a script; with LANG=sh, a block that starts with
# a line that is exactly "```sh example" is a shell script. A block ends
# at the next line that is exactly "```"; both fences start in the first
# column. Other fenced blocks (```c or ```sh without "example", ```text,
# ...) are left alone.
#
# The n-th block (counting from 1) becomes <OUT_DIR>/<stem>/example_<n>.c
# (or .lua, .sh), where <stem> is STEM, by default the file's name without
# ".md" (tests/docs/CMakeLists.txt passes "lua.kernels" for
# docs/lua/kernels.md). A C source starts with a #line directive so that
# compiler messages point into the Markdown file; a script starts with a
# comment naming its line there. A file is rewritten only when its text
# changes, so editing one example rebuilds only that one. Sources left
# from blocks that no longer exist are deleted. Finally the script writes
# <OUT_DIR>/<stem>/examples.cmake (lua_examples.cmake, sh_examples.cmake),
# which sets DC_DOC_EXAMPLES (DC_DOC_LUA_EXAMPLES, DC_DOC_SH_EXAMPLES) to
# the list of sources, for tests/docs/CMakeLists.txt to include.
#
# The text is searched with string(FIND) rather than split into a CMake
# list: C code is full of ';', '[' and trailing '\', which list splitting
# would misread.

cmake_minimum_required(VERSION 3.20)

if(NOT DOC OR NOT OUT_DIR)
  message(FATAL_ERROR "usage: cmake -DDOC=<file.md> -DOUT_DIR=<dir> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
if(NOT EXISTS "${DOC}")
  message(FATAL_ERROR "extract_examples: ${DOC} does not exist")
endif()

if(STEM)
  set(stem "${STEM}")
else()
  get_filename_component(stem "${DOC}" NAME_WLE)
endif()
set(doc_dir "${OUT_DIR}/${stem}")
file(MAKE_DIRECTORY "${doc_dir}")

# Writes |text| to |path| unless the file already holds exactly that text.
function(write_if_changed path text)
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${text}")
endfunction()

# Sets |out_var| to the number of newline characters in |text|.
function(count_newlines text out_var)
  string(REGEX REPLACE "[^\n]" "" newlines "${text}")
  string(LENGTH "${newlines}" n)
  set(${out_var} ${n} PARENT_SCOPE)
endfunction()

file(READ "${DOC}" content)
string(REPLACE "\r\n" "\n" content "${content}")
# A leading and a trailing newline let every fence be found as "\n```...\n".
set(content "\n${content}\n")

if(LANG STREQUAL "lua")
  set(open_fence "\n```lua\n")
  set(ext lua)
  set(list_var DC_DOC_LUA_EXAMPLES)
  set(list_file lua_examples.cmake)
elseif(LANG STREQUAL "sh")
  set(open_fence "\n```sh example\n")
  set(ext sh)
  set(list_var DC_DOC_SH_EXAMPLES)
  set(list_file sh_examples.cmake)
else()
  set(open_fence "\n```c example\n")
  set(ext c)
  set(list_var DC_DOC_EXAMPLES)
  set(list_file examples.cmake)
endif()
set(close_fence "\n```\n")
string(LENGTH "${open_fence}" open_len)

set(sources "")
set(index 0)
set(consumed 0)   # offset in |content| of |rest|
set(rest "${content}")
while(TRUE)
  string(FIND "${rest}" "${open_fence}" open_at)
  if(open_at EQUAL -1)
    break()
  endif()
  math(EXPR body_at "${open_at} + ${open_len}")
  string(SUBSTRING "${rest}" ${body_at} -1 after_open)
  # The closing fence is searched as "\n```\n". Putting back the newline
  # that ends the opening fence also finds a fence that directly follows
  # it (an empty block).
  string(FIND "\n${after_open}" "${close_fence}" close_at)
  if(close_at EQUAL -1)
    # Count up to and including the newline that precedes the fence line.
    math(EXPR open_abs "${consumed} + ${open_at} + 1")
    string(SUBSTRING "${content}" 0 ${open_abs} before)
    count_newlines("${before}" line)
    message(FATAL_ERROR "${DOC}:${line}: example block is never closed")
  endif()
  if(close_at EQUAL 0)
    set(body "")
  else()
    math(EXPR body_len "${close_at} - 1")
    string(SUBSTRING "${after_open}" 0 ${body_len} body)
  endif()

  # The body's first line number: k - 1 newlines precede line k in the
  # file, plus the one added at the front of |content|.
  math(EXPR body_abs "${consumed} + ${body_at}")
  string(SUBSTRING "${content}" 0 ${body_abs} before)
  count_newlines("${before}" body_line)

  math(EXPR index "${index} + 1")
  set(source "${doc_dir}/example_${index}.${ext}")
  if(ext STREQUAL "lua")
    write_if_changed("${source}" "-- ${DOC}:${body_line}\n${body}\n")
  elseif(ext STREQUAL "sh")
    write_if_changed("${source}" "# ${DOC}:${body_line}\n${body}\n")
  else()
    write_if_changed("${source}"
      "#line ${body_line} \"${DOC}\"\n${body}\n")
  endif()
  list(APPEND sources "${source}")

  # Continue after the closing fence; its last newline may open the next
  # block, so resume at that newline.
  math(EXPR skip "${body_at} + ${close_at} + 3")
  string(SUBSTRING "${rest}" ${skip} -1 rest)
  math(EXPR consumed "${consumed} + ${skip}")
endwhile()

# Drop sources of blocks that were removed from the document.
file(GLOB old_sources "${doc_dir}/*.${ext}")
foreach(old IN LISTS old_sources)
  if(NOT old IN_LIST sources)
    file(REMOVE "${old}")
  endif()
endforeach()

write_if_changed("${doc_dir}/${list_file}"
  "# Generated from ${DOC} by extract_examples.cmake.\nset(${list_var} \"${sources}\")\n")
