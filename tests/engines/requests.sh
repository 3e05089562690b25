#!/bin/bash
# An attempt's count of requests in flight has one owner (unit.h):
# tpuci__unit_req_begin and tpuci__unit_req_end in core/runtime/unit/
# state.c. No other file of core/ changes it: each names the helpers.
#   requests.sh CORE_DIR
set -u
core=$1
hits=$(grep -rnE '(\+\+|--)[[:space:]]*[A-Za-z_][A-Za-z_0-9]*(->|\.)(ua\.)?requests\b|(->|\.)requests[[:space:]]*(\+\+|--|[-+*/|&]?=([^=]|$))' \
         "$core" --include='*.c' --include='*.h' | grep -v '^[^:]*/runtime/unit/state\.c:')
if [ -n "$hits" ]; then
  echo "$hits"
  echo "FAIL: the request count is changed outside runtime/unit/state.c; use tpuci__unit_req_begin/_end"
  exit 1
fi
n=$(grep -rnE 'tpuci__unit_req_(begin|end)\(' "$core" --include='*.c' | grep -vc '^[^:]*/runtime/unit/state\.c:')
echo "ok: $n calls of tpuci__unit_req_begin/_end, no other change of the count"
