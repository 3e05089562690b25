# Records which checkout tpuci is built from, so that `tpuci export
# github` writes a workflow that builds the same tpuci (docs/github.md,
# "Which tpuci the workflow runs"): the URL of the remote `origin`, the
# commit HEAD names, whether tracked files had changes and whether the
# commit is on one of origin's branches (as of the last fetch). They go
# into OUT as C (core/base/build.c reads them), rewritten only when they
# changed: a build after a commit relinks, any other build does not.
#
#   cmake -DSRC=DIR -DOUT=FILE [-DGIT=PATH] -P cmake/build_info.cmake
#
# The build runs it every time (CMakeLists.txt, tpuci_build_info).
# Nothing is recorded (empty strings) when git is missing, when SRC is
# not the top of a git work tree (a source tarball, also one unpacked
# inside another repository), when there is no origin, or when origin is
# a local path or a scheme a runner cannot fetch. An address holds no
# user or password in the record (they would end up in a committed
# workflow), and an ssh address (git@host:org/x.git,
# ssh://git@host/org/x.git) is recorded as https://host/org/x.git, which
# a runner fetches without keys.
cmake_minimum_required(VERSION 3.16)

if(NOT DEFINED SRC OR NOT DEFINED OUT)
  message(FATAL_ERROR "build_info.cmake: give -DSRC=DIR -DOUT=FILE")
endif()
# The environment must not point git at another repository.
unset(ENV{GIT_DIR})
unset(ENV{GIT_WORK_TREE})
unset(ENV{GIT_INDEX_FILE})

set(url "")
set(commit "")
set(modified 0)
set(pushed 0)

if(NOT DEFINED GIT)
  find_program(GIT git)
endif()

# git_out(VAR ARGS...): git's output in SRC, stripped, or "" when it fails.
function(git_out var)
  execute_process(COMMAND "${GIT}" -C "${SRC}" ${ARGN}
    OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    set(out "")
  endif()
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

# normalise(VAR RAW): the address a runner can fetch RAW at, or "".
function(normalise var raw)
  set(u "")
  if(raw MATCHES "^(https?|git)://")
    # Without a user or password.
    string(REGEX REPLACE "^([a-z]+://)[^/@]*@" "\\1" u "${raw}")
  elseif(raw MATCHES "^(ssh|git\\+ssh)://([^/@]*@)?([^/:]+)(:[0-9]*)?/(.+)$")
    set(u "https://${CMAKE_MATCH_3}/${CMAKE_MATCH_5}")
  elseif(raw MATCHES "^([^/@:]+@)?([A-Za-z0-9][A-Za-z0-9.-]*\\.[A-Za-z]+):/?([^/].*)$")
    # scp's form, user@host:path, of a host with a domain (a Windows
    # drive letter or a local "dir:x" is no host).
    set(u "https://${CMAKE_MATCH_2}/${CMAKE_MATCH_3}")
  endif()
  # Only the characters of a URL (RFC 3986): nothing the C string, YAML
  # or a shell would read as more than text.
  if(NOT u MATCHES "^[A-Za-z0-9._~:/?#@!$&'()*+,;=%-]+$" OR u MATCHES "[\"\\\\]")
    set(u "")
  endif()
  set(${var} "${u}" PARENT_SCOPE)
endfunction()

if(GIT)
  git_out(top rev-parse --show-toplevel)
  get_filename_component(src_real "${SRC}" REALPATH)
  if(NOT top STREQUAL "")
    get_filename_component(top "${top}" REALPATH)
  endif()
  if(NOT top STREQUAL "" AND top STREQUAL src_real)
    git_out(commit rev-parse --verify --quiet "HEAD^{commit}")
    if(NOT commit MATCHES "^[0-9a-f]+$")
      set(commit "")
    else()
      git_out(raw remote get-url origin)
      normalise(url "${raw}")
      git_out(changes status --porcelain --untracked-files=no)
      if(NOT changes STREQUAL "")
        set(modified 1)
      endif()
      git_out(branches for-each-ref --contains HEAD --count=1 refs/remotes/origin)
      if(NOT branches STREQUAL "")
        set(pushed 1)
      endif()
    endif()
  endif()
endif()

set(text "/* Written by cmake/build_info.cmake: the checkout this build of tpuci
 * came from (core/base/build.c). Empty: none recorded. */
const char tpuci__build_source_url[] = \"${url}\";
const char tpuci__build_source_commit[] = \"${commit}\";
const int tpuci__build_source_modified = ${modified};
const int tpuci__build_source_pushed = ${pushed};
")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
