# shellcheck shell=sh
# `tpuci doctor`'s reach probe on a bridge network (netprobe.c), run in
# the second container as
#   sh -c "<this script>" probe PEER [GATEWAY]
# Its last line says what it found; it exits 0 (reached), 1 (did not)
# or 2 (no ping nor python3: not checked). A refused TCP connection is an
# answer; a gateway whose ARP entry is complete answered too (a firewall
# may drop what it gets).
#
# Comment lines are not embedded (cmake/embed_sh.cmake): what runs is
# the rest, byte for byte. No line of a quoted string may start with #.
PY='import socket,sys
try:
 a=socket.getaddrinfo(sys.argv[1],9,socket.AF_INET,socket.SOCK_STREAM)[0][4]
except OSError:
 sys.exit(1)
s=socket.socket()
s.settimeout(3)
try:
 s.connect(a)
except ConnectionRefusedError:
 pass
except OSError:
 sys.exit(2)
'
# reach NAME: 0 reached, 1 the name does not resolve, 2 no answer, 3 no
# tool to ask with; $how says which tool asked.
reach() {
  if command -v ping >/dev/null 2>&1; then
    how=ping; o=$(ping -c 1 -W 2 "$1" 2>&1) && return 0
    case $o in
      *ermission*|*'not permitted'*) ;;
      *'bad address'*|*'nknown host'*|*'not known'*|*'emporary failure'*) return 1;;
      *) return 2;;
    esac
  fi
  command -v python3 >/dev/null 2>&1 || return 3
  how=python3; python3 -c "$PY" "$1"
}
n=0
while :; do
  reach "$1"; r=$?; n=$((n+1))
  if [ $r != 1 ] || [ $n -ge 5 ]; then break; fi
  sleep 1
done
case $r in
  0) ;;
  1) echo "the name $1 does not resolve ($how)"; exit 1;;
  3) echo 'the image has neither ping nor python3'; exit 2;;
  *) echo "$1 does not answer ($how): is the bridge down?"; exit 1;;
esac
if [ -n "$2" ]; then
  reach "$2"
  # shellcheck disable=SC2181
  if [ $? != 0 ] && ! grep -Eq "^$2 +0x[0-9a-f]+ +0x2 " /proc/net/arp 2>/dev/null; then
    echo "the gateway $2 (the bridge's own address) does not answer ($how): the bridge is down or has no address"; exit 1
  fi
fi
echo "$how"
