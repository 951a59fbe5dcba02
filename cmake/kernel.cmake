# The kernel module: Kbuild against SIWX_KDIR (default: scripts/kdir).
set(SIWX_KDIR "" CACHE PATH "Kernel build tree to build siwx.ko against")
if(NOT SIWX_KDIR)
  execute_process(COMMAND ${CMAKE_SOURCE_DIR}/scripts/kdir
                  OUTPUT_VARIABLE _kdir OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _kdir_rc ERROR_QUIET)
  if(_kdir_rc EQUAL 0)
    set(SIWX_KDIR "${_kdir}" CACHE PATH "Kernel build tree to build siwx.ko against" FORCE)
  endif()
endif()

set(SIWX_KMOD_DIR ${CMAKE_BINARY_DIR}/kernel)
set(SIWX_KMOD ${SIWX_KMOD_DIR}/siwx.ko)
if(SIWX_KDIR)
  message(STATUS "siwx.ko: building against ${SIWX_KDIR}")
  file(GLOB _kmod_sources CONFIGURE_DEPENDS
       ${CMAKE_SOURCE_DIR}/kernel/* ${CMAKE_SOURCE_DIR}/core/*.c
       ${CMAKE_SOURCE_DIR}/include/siwx/*.h ${CMAKE_SOURCE_DIR}/include/siwx/*/*.h)
  add_custom_command(
    OUTPUT ${SIWX_KMOD}
    # -Werror: a compiler warning fails the build (tests/kernel/kbuild-clean
    # also fails on modpost's)
    COMMAND ${CMAKE_SOURCE_DIR}/scripts/kbuild ${SIWX_KDIR} ${SIWX_KMOD_DIR} -s
            KCFLAGS=-Werror
    DEPENDS ${_kmod_sources} ${CMAKE_SOURCE_DIR}/scripts/kbuild
            ${CMAKE_SOURCE_DIR}/VERSION
    COMMENT "Kbuild: siwx.ko"
    VERBATIM)
  add_custom_target(kmod ALL DEPENDS ${SIWX_KMOD})
else()
  message(WARNING "siwx.ko: no kernel headers found (install linux-headers-amd64 "
                  "or set -DSIWX_KDIR=...); the module is not built")
endif()
