# shellcheck shell=sh
# The wait step of a gang's host (gate.h), run as
#   sh -c "K='<key>' G='<go>' H=worker-<i> P='worker-0 ...'
#   <this script>" tpuci-gang ARGV...
# $K is the key, $P the names, $H this host's own, $G tpuci's go; r()
# looks a name up with what the image has: getent (glibc's or musl's
# resolver, as the job's own lookups), busybox's nslookup, python3. A
# name that does not exist yet costs a DNS timeout (docker's DNS on an
# internal network answers none: 5 s by default, 20 s for glibc's
# retries), so the lookups get 1 s and one try (RES_OPTIONS for glibc's;
# nslookup's -timeout and -retry when it takes them, tried on the host's
# own name, which resolves) and run all at once. The set of names still
# missing is said when it changes. Then it waits for the go: a host whose
# peers all resolve may not start yet, or a peer whose job ends at once
# would be gone from the names before a slower host saw it. `sleep 0.1`
# is not POSIX (busybox and coreutils take it), `sleep 1` is.
#
# Comment lines are not embedded (cmake/embed_sh.cmake): what runs is
# the rest, byte for byte. No line of a quoted string may start with #.
o='timeout:1 attempts:1'
if command -v getent >/dev/null 2>&1; then
  r() { RES_OPTIONS=$o getent hosts "$1" >/dev/null 2>&1; }
elif command -v nslookup >/dev/null 2>&1; then
  o=; nslookup -timeout=1 -retry=1 "$H" >/dev/null 2>&1 && o='-timeout=1 -retry=1'
  # $o is nslookup's options, or none: split, never quoted.
  # shellcheck disable=SC2086
  r() { nslookup $o "$1" >/dev/null 2>&1; }
elif command -v python3 >/dev/null 2>&1; then
  r() { RES_OPTIONS=$o python3 -c 'import socket, sys; socket.getaddrinfo(sys.argv[1], None)' "$1" >/dev/null 2>&1; }
else echo "$K gang none" >&2; P=; G=; fi
m=
while [ -n "$P" ]; do
  # Every name looked up at once; the echo makes the missing ones one
  # line of words.
  # shellcheck disable=SC2046,SC2116
  x=" $(echo $(for n in $P; do { r "$n" || echo "$n"; } & done; wait)) "
  w=; for n in $P; do case $x in *" $n "*) w="$w $n";; esac; done
  [ -z "$w" ] && break
  [ "$w" = "$m" ] || echo "$K gang wait$w" >&2
  m=$w
  sleep 0.1 2>/dev/null || sleep 1
done
if [ -n "$G" ]; then
  echo "$K gang ready" >&2
  until r "$G"; do sleep 0.1 2>/dev/null || sleep 1; done
fi
echo "$K gang up" >&2
exec "$@"
