# Embeds shell scripts the way embed.cmake embeds the Lua prelude, without
# their comment lines: a script keeps its comments and its shellcheck
# directives in its file, and what runs (`sh -c SCRIPT`) is the rest,
# byte for byte. A comment line is one whose first non-blank character
# is '#' (so no line of a quoted string in a script may start with one).
#   -DIN=<files|...> -DOUT=<c file> -DPREFIX=<symbol prefix> -DDIR=<folder>
# (the files separated by '|': a ';' would split the command line). The
# copies without comments go to DIR (tests/engines checks them too); each
# file becomes `const char <PREFIX><stem>[]` and its `_len`.
string(REPLACE "|" ";" IN "${IN}")
set(copies)
file(MAKE_DIRECTORY ${DIR})
foreach(f IN LISTS IN)
  get_filename_component(name ${f} NAME)
  file(READ ${f} text)
  string(REGEX REPLACE "\n[ \t]*#[^\n]*" "" text "\n${text}")
  string(SUBSTRING "${text}" 1 -1 text)
  file(WRITE ${DIR}/${name} "${text}")
  list(APPEND copies ${DIR}/${name})
endforeach()
set(IN ${copies})
include(${CMAKE_CURRENT_LIST_DIR}/embed.cmake)
