#!/usr/bin/env bash
# libtpuci.so exports exactly the functions include/tpuci.h declares:
# every exported symbol is a tpuci_* function of the header (nothing
# internal, nothing of the libraries it links), and every function the
# header declares is exported (a declaration the library lacks would fail
# to link in a program that embeds it).
set -u
: "${TPUCI_BUILD:?}" "${TESTS:?}"
so=$TPUCI_BUILD/libtpuci.so
[ -f "$so" ] || { echo "SKIP: no shared library built"; exit 77; }
header=$TESTS/../include/tpuci.h
work=$(mktemp -d /tmp/tpuci-abi.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The header's functions: names followed by '(' at the start of a
# declaration (return type on the same line), comments left out.
sed 's#/\*.*\*/##g; /^\s*\/\?\*/d' "$header" |
  grep -oE '^[a-z][a-z_ 0-9*]*\btpuci_[a-z0-9_]+\(' |
  grep -oE 'tpuci_[a-z0-9_]+\($' | tr -d '(' | sort -u > "$work/header"
nm -D --defined-only "$so" | awk '$2 ~ /^[TWDBR]$/ {sub(/@.*/, "", $3); print $3}' | sort -u > "$work/exported"
fail=0
if extra=$(comm -13 "$work/header" "$work/exported") && [ -n "$extra" ]; then
  echo "FAIL: exported but not in tpuci.h:"; echo "$extra"; fail=1
fi
if missing=$(comm -23 "$work/header" "$work/exported") && [ -n "$missing" ]; then
  echo "FAIL: declared in tpuci.h but not exported:"; echo "$missing"; fail=1
fi
n=$(wc -l < "$work/header")
[ "$n" -ge 40 ] || { echo "FAIL: only $n functions read from tpuci.h: the parser broke"; fail=1; }
# A program that takes the address of every declared function links.
{
  echo '#include "tpuci.h"'
  echo 'typedef void (*fn)(void);'
  echo 'int main(void) { volatile fn all[] = {'
  sed 's/.*/  (fn) \&&,/' "$work/header"
  echo '  }; (void) all; return 0; }'
} > "$work/all.c"
cc -w -I"$TESTS/../include" -o "$work/all" "$work/all.c" -L"$TPUCI_BUILD" -ltpuci ||
  { echo "FAIL: a program using every function of tpuci.h does not link"; fail=1; }
# The SONAME is the one docs/embedding.md names ("Versions"): an ABI
# change bumps both.
soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
documented=$(tr '\n' ' ' < "$TESTS/../docs/embedding.md" |
  grep -o 'SONAME, `libtpuci\.so\.[0-9][0-9]*`' | grep -o 'libtpuci\.so\.[0-9]*')
if [ -z "$soname" ] || [ "$soname" != "$documented" ]; then
  echo "FAIL: the library's SONAME is '$soname', docs/embedding.md says '$documented'"; fail=1
fi
[ $fail = 0 ] && echo "abi: $n functions, header and exports agree"
exit $fail
