# DcManPages.cmake: installs the manual pages of docs/man: dclua(1), the
# runner, and libdc(3), the library's entry points. tests/docs checks
# that they format without warnings.
set(DC_MAN_PAGES
  ${PROJECT_SOURCE_DIR}/docs/man/dclua.1
  ${PROJECT_SOURCE_DIR}/docs/man/libdc.3)
foreach(page IN LISTS DC_MAN_PAGES)
  string(REGEX MATCH "[0-9]$" section ${page})
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endforeach()
