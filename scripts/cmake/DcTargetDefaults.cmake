# DcTargetDefaults.cmake: warnings, -Werror and sanitizers for one target.
#
# Every target of the project calls dc_target_defaults(); flags are applied
# per target, never through CMAKE_C_FLAGS, so a host project that adds dc as
# a subdirectory keeps its own flags.

set(DC_WARNINGS
    -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes
    -Wmissing-prototypes -Wpointer-arith -Wvla -Wundef)

function(dc_target_defaults target)
  target_compile_options(${target} PRIVATE ${DC_WARNINGS})
  target_compile_definitions(${target} PRIVATE _GNU_SOURCE)
  if(DC_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(DC_SANITIZE)
    set(flags -fsanitize=${DC_SANITIZE} -fno-omit-frame-pointer)
    if(DC_SANITIZE MATCHES "undefined")
      list(APPEND flags -fno-sanitize-recover=undefined)
    endif()
    target_compile_options(${target} PRIVATE ${flags})
    target_link_options(${target} PRIVATE ${flags})
  endif()
endfunction()
