# Where mjrefresh's native cores find MuJoCo, and how one core is built
# against one MuJoCo release.
#
# A core is compiled against the headers of one release and linked to that
# release's libmujoco (the soname carries the full version), so it runs with
# that release only. Two modes:
#
# * Source build (default): ONE core, against the mujoco Python package of the
#   building interpreter, installed as mjrefresh/_core*.so (as before).
# * Prebuilt wheel (-DMJREFRESH_MUJOCO_ROOTS=<dir>, set by
#   scripts/build-wheel.sh): one core per release of
#   src/mjrefresh/mujoco_releases.txt, compiled against
#   <dir>/<release>/mujoco/include, linked to
#   <dir>/<release>/mujoco/libmujoco.so.<release> (both unpacked from that
#   release's wheel) and installed as mjrefresh/_cores/mj<release>/_core*.so.
#   The wheel carries no libmujoco: each core's rpath points at the mujoco
#   package installed next to mjrefresh in site-packages.
#
# Either way the cores load the libmujoco of the installed `mujoco` package,
# so exactly one libmujoco is ever loaded and raw mjModel/mjData pointers can
# cross between the bindings and the core.
#
# Use: mjrefresh_add_cores(<out-targets-var> SOURCES ... INCLUDE_DIRS ...
#        [NB_OPTIONS <nanobind_add_module options>])
# returns the list of core targets; settings common to every core (warnings,
# sanitizers) are then applied by the caller to each of them.

set(MJREFRESH_RELEASES_FILE "${CMAKE_CURRENT_LIST_DIR}/../src/mjrefresh/mujoco_releases.txt")
set(MJREFRESH_MUJOCO_ROOTS "" CACHE PATH
  "Prebuilt wheel: directory with <release>/mujoco/{include,libmujoco.so.<release>} per supported release")

# Release versions (first column) of mujoco_releases.txt, in file order.
function(mjrefresh_supported_releases out_var)
  file(STRINGS "${MJREFRESH_RELEASES_FILE}" _lines REGEX "^[0-9]")
  set(_releases "")
  foreach(_line IN LISTS _lines)
    string(REGEX MATCH "^[0-9]+\\.[0-9]+\\.[0-9]+" _release "${_line}")
    list(APPEND _releases "${_release}")
  endforeach()
  set(${out_var} "${_releases}" PARENT_SCOPE)
endfunction()

# Source build: version and package directory of the building interpreter's
# mujoco. Fails early with the fix when there is none (e.g. an isolated
# `pip install .`, whose throw-away build environment has no mujoco).
function(mjrefresh_installed_mujoco out_version out_dir)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
      "import mujoco, os; print(os.path.dirname(mujoco.__file__)); print(mujoco.__version__)"
    OUTPUT_VARIABLE _info OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR
      "mjrefresh: no `mujoco` in the build environment (${Python_EXECUTABLE}). "
      "A source build compiles against the installed MuJoCo, so build without isolation: "
      "pip install mujoco==<version you run> nanobind scikit-build-core && "
      "pip install --no-build-isolation .   (or install the prebuilt wheel: "
      "bash scripts/build-wheel.sh dist && pip install dist/mjrefresh-*.whl)\n"
      "`import mujoco` said:\n${_err}")
  endif()
  string(REPLACE "\n" ";" _info "${_info}")
  list(GET _info 0 _dir)
  list(GET _info 1 _version)
  set(${out_version} "${_version}" PARENT_SCOPE)
  set(${out_dir} "${_dir}" PARENT_SCOPE)
endfunction()

# The error trap (cpp/core/mujoco_error_trap.cc) installs a per-thread log
# handler through two functions libmujoco exports but does not declare (the
# official Python bindings use them too). Check at configure time that each
# libmujoco a core links still exports them, rather than failing at link or
# import time.
function(mjrefresh_check_log_handler_exports library version)
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_LIBRARIES "${library}")
  check_cxx_source_compiles([=[
extern "C" void* _mjPRIVATE_setTlsLogHandler(void*);
extern "C" void* _mjPRIVATE_getGlobalLogHandler(void);
int main() { return _mjPRIVATE_setTlsLogHandler(0) == _mjPRIVATE_getGlobalLogHandler(); }
]=] MJREFRESH_MUJOCO_${version}_HAS_TLS_LOG_HANDLER)
  if(NOT MJREFRESH_MUJOCO_${version}_HAS_TLS_LOG_HANDLER AND version VERSION_LESS 3.10.0)
    message(FATAL_ERROR
      "MuJoCo ${version} is not supported: releases before 3.10.0 have no unified log "
      "handler (_mjPRIVATE_setTlsLogHandler), which cpp/core/mujoco_error_trap.cc uses to turn "
      "MuJoCo errors in worker threads into per-row failures. Install MuJoCo 3.10.0 or newer "
      "(the releases in src/mjrefresh/mujoco_releases.txt have a prebuilt core).")
  elseif(NOT MJREFRESH_MUJOCO_${version}_HAS_TLS_LOG_HANDLER)
    message(FATAL_ERROR
      "${library} does not export _mjPRIVATE_setTlsLogHandler / "
      "_mjPRIVATE_getGlobalLogHandler, which cpp/core/mujoco_error_trap.cc uses to turn "
      "MuJoCo errors in worker threads into per-row failures. This MuJoCo release renamed "
      "or removed them: update mujoco_error_trap.cc for MuJoCo ${version}.")
  endif()
endfunction()

# Prebuilt wheel: a core that loads on glibc >= 2.28 with any libstdc++
# (manylinux_2_28) although built here. libstdc++ is linked statically
# (the GCC here is newer than a manylinux_2_28 system's), its symbols are
# kept private, and the glibc symbols it needs at versions newer than 2.28
# are redirected to old versions: see manylinux_glibc_compat.cc.
function(mjrefresh_manylinux_link target)
  set(_wrapped pthread_create pthread_join pthread_detach pthread_once arc4random
    __libc_single_threaded dlsym __isoc23_strtoul)
  list(TRANSFORM _wrapped PREPEND "--wrap=")
  string(JOIN "," _wrap ${_wrapped})
  target_sources(${target} PRIVATE "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/manylinux_glibc_compat.cc")
  target_link_options(${target} PRIVATE -static-libstdc++ "LINKER:--exclude-libs,ALL"
    "LINKER:${_wrap}")
  # pthread_* @GLIBC_2.2.5 live in libpthread.so.0 before glibc 2.34.
  target_link_libraries(${target} PRIVATE "-Wl,--no-as-needed" "-l:libpthread.so.0" "-l:libdl.so.2")
endfunction()

# One core: nanobind module `_core` built against the MuJoCo in <pkg_dir>
# (a `mujoco` package directory: include/ and libmujoco.so.<version>).
function(mjrefresh_add_core target version pkg_dir destination)
  cmake_parse_arguments(PARSE_ARGV 4 ARG "" "" "SOURCES;INCLUDE_DIRS;NB_OPTIONS")
  set(_library "${pkg_dir}/libmujoco.so.${version}")
  if(NOT EXISTS "${_library}" OR NOT EXISTS "${pkg_dir}/include/mujoco/mujoco.h")
    message(FATAL_ERROR
      "mjrefresh: MuJoCo ${version} incomplete in ${pkg_dir} "
      "(needs include/mujoco/mujoco.h and libmujoco.so.${version})")
  endif()
  mjrefresh_check_log_handler_exports("${_library}" "${version}")
  nanobind_add_module(${target} NB_STATIC ${ARG_NB_OPTIONS} ${ARG_SOURCES})
  target_include_directories(${target} PRIVATE "${pkg_dir}/include" ${ARG_INCLUDE_DIRS})
  target_link_libraries(${target} PRIVATE "${_library}")
  target_compile_definitions(${target} PRIVATE MJREFRESH_MUJOCO_VERSION="${version}")
  # From the install directory back to site-packages, then into mujoco/.
  string(REGEX REPLACE "[^/]+" ".." _up "${destination}")
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME _core
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/${destination}"
    INSTALL_RPATH "$ORIGIN/${_up}/mujoco;${MJREFRESH_CORE_EXTRA_RPATH}"
    BUILD_RPATH "${pkg_dir}")
  if(MJREFRESH_MUJOCO_ROOTS)
    mjrefresh_manylinux_link(${target})
  endif()
  install(TARGETS ${target} LIBRARY DESTINATION "${destination}")
  message(STATUS "mjrefresh: core ${target} against MuJoCo ${version} at ${pkg_dir}")
endfunction()

# Every core of this build; sets <out_targets> to their target names, and
# MJREFRESH_CORE_VERSIONS, MJREFRESH_CORES_PREBUILT (True/False) and
# MJREFRESH_MUJOCO_PKG_DIR for cpp/build_info.py.in.
function(mjrefresh_add_cores out_targets)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SOURCES;INCLUDE_DIRS;NB_OPTIONS")
  set(_targets "")
  if(MJREFRESH_MUJOCO_ROOTS)
    mjrefresh_supported_releases(_releases)
    set(MJREFRESH_CORE_EXTRA_RPATH "")
    foreach(_release IN LISTS _releases)
      string(REPLACE "." "_" _tag "${_release}")
      mjrefresh_add_core(_core_${_tag} "${_release}" "${MJREFRESH_MUJOCO_ROOTS}/${_release}/mujoco"
        "mjrefresh/_cores/mj${_tag}" SOURCES ${ARG_SOURCES} INCLUDE_DIRS ${ARG_INCLUDE_DIRS}
        NB_OPTIONS ${ARG_NB_OPTIONS})
      list(APPEND _targets _core_${_tag})
    endforeach()
    set(_pkg_dir "")
    set(_prebuilt True)
  else()
    mjrefresh_installed_mujoco(_version _pkg_dir)
    # The absolute path is the fallback for in-tree (editable) builds.
    set(MJREFRESH_CORE_EXTRA_RPATH "${_pkg_dir}")
    mjrefresh_add_core(_core "${_version}" "${_pkg_dir}" "mjrefresh"
      SOURCES ${ARG_SOURCES} INCLUDE_DIRS ${ARG_INCLUDE_DIRS} NB_OPTIONS ${ARG_NB_OPTIONS})
    set(_releases "${_version}")
    set(_targets _core)
    set(_prebuilt False)
  endif()
  set(${out_targets} "${_targets}" PARENT_SCOPE)
  set(MJREFRESH_CORE_VERSIONS "${_releases}" PARENT_SCOPE)
  set(MJREFRESH_MUJOCO_PKG_DIR "${_pkg_dir}" PARENT_SCOPE)
  set(MJREFRESH_CORES_PREBUILT ${_prebuilt} PARENT_SCOPE)
endfunction()
