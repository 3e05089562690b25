#!/usr/bin/env bash
# Installs tpuci into a scratch prefix and builds the embedding example
# with nothing but the installed header, library and pkg-config file.
set -eu
: "${TPUCI_BUILD:?}" "${TESTS:?}"
prefix=$(mktemp -d /tmp/tpuci-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$TPUCI_BUILD" --prefix "$prefix" > "$prefix/install.log"
test -x "$prefix/bin/tpuci"
test -f "$prefix/include/tpuci.h"
pcdir=$(dirname "$(find "$prefix" -name tpuci.pc | head -n 1)")
test -n "$pcdir"
export PKG_CONFIG_PATH="$pcdir"
# Against the shared library.
cc -Wall -Wextra -Werror -o "$prefix/embed" "$TESTS/embed/embed_example.c" \
  $(pkg-config --cflags --libs tpuci libuv)
LD_LIBRARY_PATH=$(dirname "$(find "$prefix" -name 'libtpuci.so' | head -n 1)") "$prefix/embed"
# And against the static library (its dependencies linked as shared
# libraries: Debian does not ship static builds of all of curl's).
cc -Wall -Wextra -Werror -o "$prefix/embed-static" "$TESTS/embed/embed_example.c" \
  $(pkg-config --cflags tpuci) "$(find "$prefix" -name libtpuci.a | head -n 1)" \
  $(pkg-config --libs $(pkg-config --print-requires-private tpuci | awk '{print $1}')) -lm
"$prefix/embed-static"
"$prefix/bin/tpuci" --version
# And from CMake: find_package(tpuci) gives tpuci::tpuci.
mkdir -p "$prefix/consumer"
cat > "$prefix/consumer/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(tpuci 0.2 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(UV REQUIRED IMPORTED_TARGET libuv)
add_executable(embed "$TESTS/embed/embed_example.c")
target_link_libraries(embed PRIVATE tpuci::tpuci PkgConfig::UV)
CM
cmake -S "$prefix/consumer" -B "$prefix/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
  > "$prefix/consumer.log" 2>&1 || { cat "$prefix/consumer.log"; exit 1; }
cmake --build "$prefix/consumer/build" >> "$prefix/consumer.log" 2>&1 || { cat "$prefix/consumer.log"; exit 1; }
LD_LIBRARY_PATH=$(dirname "$(find "$prefix" -name 'libtpuci.so' | head -n 1)") "$prefix/consumer/build/embed"
echo "install test: ok"
