# shellcheck shell=sh
# The wait step of a gang's host (gate.h), run as
#   sh -c "K='<key>' G='<go>' E='<end>' O='0 ...' H=worker-<i>
#   P='worker-0 ...'
#   <this script>" tpuci-gang ARGV...
# $K is the key, $P the names, $H this host's own, $G tpuci's go, $E
# tpuci's end (empty: no end step, the command is exec'd; podman), $O
# the command's statuses that let the peers run on (0, pytest's 1 and
# 5); r()
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
else echo "$K gang none" >&2; P=; G=; E=; fi
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
[ -n "$E" ] || exec "$@"
# The end step: the command runs as this shell's child, and the shell
# stays once it ended, so that the host's name resolves until every host
# of the gang has ended (a peer may still look it up): it says the
# command's status, then waits for tpuci's end name (made once every
# host said so) and exits with that status. tpuci's SIGTERM (a timeout,
# a cancel, the gang's failure) reaches this shell through the
# container's init: it is passed on to the command, and once the
# command ended it ends the wait at once. A status not in $O stops the
# gang (tpuci stops the others): the host exits at once, its container's
# end the engine's word on it (an OOM kill). The command's stdin is the
# shell's (fd 3: an asynchronous list's would be /dev/null); like every
# asynchronous list without job control it starts with SIGINT and
# SIGQUIT ignored (tpuci sends neither; docs/docker.md).
t=''; c=''; n=''
trap 't=1; n=1; [ -z "$c" ] || kill -TERM "$c" 2>/dev/null' TERM
# (A closed stdin stays closed in effect: /dev/null. `true`, not `:`, a
# special built-in whose redirection error would end this shell.)
if { true 3<&0; } 2>/dev/null; then exec 3<&0; else exec 3</dev/null; fi
"$@" 0<&3 3<&- &
c=$!
exec 3<&-
[ -z "$t" ] || kill -TERM "$c" 2>/dev/null
# A wait the trap cut short returns 143 ($n says so): wait again, until
# one answers the command's status (127 is a wait for a command whose
# status was answered already: the trap came after it).
wait "$c"; s=$?
while [ -n "$n" ]; do n=''; wait "$c"; q=$?; [ "$q" = 127 ] || s=$q; done
trap 'exit "$s"' TERM
[ -z "$t" ] || exit "$s"
case " $O " in *" $s "*) ;; *) exit "$s";; esac
echo "$K gang done $s" >&2
until r "$E"; do sleep 0.1 2>/dev/null || sleep 1; done
exit "$s"
