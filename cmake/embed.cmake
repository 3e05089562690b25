# Turns Lua files into a C file of byte arrays: -DIN=<files;...> -DOUT=<c file>.
# Each file becomes `const char tpuci__lua_<stem>[]` and `..._len`.
set(out "/* Generated from lua/ by cmake/embed.cmake. Do not edit. */\n#include <stddef.h>\n")
foreach(f IN LISTS IN)
  get_filename_component(stem ${f} NAME_WE)
  file(READ ${f} hex HEX)
  string(LENGTH "${hex}" hexlen)
  math(EXPR n "${hexlen} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
  string(APPEND out "const char tpuci__lua_${stem}[] = {\n${bytes}0x00};\n")
  string(APPEND out "const size_t tpuci__lua_${stem}_len = ${n};\n")
endforeach()
file(WRITE ${OUT} "${out}")
