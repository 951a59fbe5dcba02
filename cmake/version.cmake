# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The project's version, from the one place it is written: VERSION at the
# top of the tree (MAJOR.MINOR.PATCH). Included before project() so that
# project(siwx VERSION ${SIWX_VERSION}) uses it. debian/changelog and
# redhat/siwx.spec repeat it in their changelogs; debian/rules refuses to
# build and the pkg.versions-agree test fails when they disagree.
set(_siwx_version_file "${CMAKE_CURRENT_LIST_DIR}/../VERSION")
file(STRINGS "${_siwx_version_file}" SIWX_VERSION LIMIT_COUNT 1)
string(STRIP "${SIWX_VERSION}" SIWX_VERSION)
if(NOT SIWX_VERSION MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
  message(FATAL_ERROR
    "VERSION must hold MAJOR.MINOR.PATCH, not '${SIWX_VERSION}'")
endif()
# Re-run the configure step when VERSION changes.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  "${_siwx_version_file}")
unset(_siwx_version_file)
