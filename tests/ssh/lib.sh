# SSH workers for tests/ssh/: N Debian openssh-server sshds, each in a
# network namespace of its own joined to the root namespace by a veth
# pair, with generated host and client keys, a known_hosts file and an
# ssh_config of the test's own (so nothing reads or writes /root/.ssh).
# Source it after tests/e2e/lib.sh. Needs root, sshd and ip netns;
# skips (exit 77) with the reason otherwise. Everything it made is torn
# down on exit.
#
#   ssh_start N       starts workers 0..N-1; SSH_ADDR[i] is worker i's
#                     address, SSH_NS[i] its namespace; $SSHD/ssh_config
#                     reaches them as root
#   ssh_stop_one I    kills worker I's sshd (and what it runs)
#   ssh_drop I        drops worker I's sessions (its sshd's session
#                     processes; the listener stays, as a machine that
#                     comes back)
#   wait_for FILE     waits for FILE to exist, up to 60 s
#   ssh_link          lets the workers reach each other (a gang's
#                     rendezvous): forwarding between their links
#   ssh_left NS PAT   prints the processes of namespace NS whose command
#                     line matches PAT (what a run left on a worker)
#
# SSH_SSHD_EXTRA (set before ssh_start): more sshd_config lines for every
# worker (e.g. "SetEnv DOCKER_HOST=unix:///..." for docker on the workers);
# SSH_SSHD_EXTRA_N[i]: for worker i only, before those (sshd takes a
# keyword's first value).
SSHD=$WORK/sshd
# A 10.N.0.0/16 no other link uses (another test's workers, a VPN).
SSH_NET=$((100 + $$ % 150))
for _ in $(seq 150); do
  ip route 2>/dev/null | grep -q "^10\.$SSH_NET\." || break
  SSH_NET=$((100 + (SSH_NET - 99) % 150))
done
SSH_ADDR=()
SSH_NS=()
declare -a SSH_SSHD_EXTRA_N
SSH_PIDS=()

ssh_skip() { echo "SKIP: $*"; exit 77; }

SSH_FWD=
SSH_IPFWD=

ssh_teardown() {
  local i
  [ -n "$SSH_FWD" ] && iptables -D FORWARD -s "10.$SSH_NET.0.0/16" -d "10.$SSH_NET.0.0/16" -j ACCEPT 2>/dev/null
  [ -n "$SSH_IPFWD" ] && sysctl -q -w net.ipv4.ip_forward="$SSH_IPFWD"
  for i in "${!SSH_NS[@]}"; do
    [ -n "${SSH_PIDS[$i]:-}" ] && kill "${SSH_PIDS[$i]}" 2>/dev/null
    ip netns pids "${SSH_NS[$i]}" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "${SSH_NS[$i]}" 2>/dev/null
    ip link del "tpuci$$r$i" 2>/dev/null
  done
  rm -rf "$WORK"
}
trap ssh_teardown EXIT

ssh_start() {
  local n=$1 i ns addr
  [ "$(id -u)" = 0 ] || ssh_skip "not root (network namespaces and sshd need it)"
  [ -x /usr/sbin/sshd ] || ssh_skip "no /usr/sbin/sshd (apt-get install openssh-server)"
  command -v ssh > /dev/null || ssh_skip "no ssh client (apt-get install openssh-client)"
  command -v ip > /dev/null || ssh_skip "no ip (apt-get install iproute2)"
  mkdir -p "$SSHD" /run/sshd
  ssh-keygen -q -t ed25519 -N '' -C tpuci-test -f "$SSHD/id" || ssh_skip "ssh-keygen failed"
  cp "$SSHD/id.pub" "$SSHD/authorized_keys"
  : > "$SSHD/known_hosts"
  for ((i = 0; i < n; i++)); do
    ns="tpuci-ssh-$$-$i"
    addr="10.$SSH_NET.$i.2"
    ip netns add "$ns" 2>/dev/null || ssh_skip "ip netns add failed (no network namespaces here)"
    SSH_NS[$i]=$ns
    ip link add "tpuci$$r$i" type veth peer name "tpuci$$n$i" || ssh_skip "no veth pairs"
    ip link set "tpuci$$n$i" netns "$ns"
    # eth0 on every worker, as on a VM (GLOO_SOCKET_IFNAME=eth0).
    ip -n "$ns" link set "tpuci$$n$i" name eth0
    ip addr add "10.$SSH_NET.$i.1/24" dev "tpuci$$r$i"
    ip link set "tpuci$$r$i" up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" route add default via "10.$SSH_NET.$i.1"
    ssh-keygen -q -t ed25519 -N '' -C "worker-$i" -f "$SSHD/host$i"
    echo "$addr $(cut -d' ' -f1,2 "$SSHD/host$i.pub")" >> "$SSHD/known_hosts"
    cat > "$SSHD/sshd$i.conf" <<CONF
ListenAddress $addr
HostKey $SSHD/host$i
AuthorizedKeysFile $SSHD/authorized_keys
PidFile $SSHD/sshd$i.pid
StrictModes no
PermitRootLogin yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
MaxStartups 100
MaxSessions 100
${SSH_SSHD_EXTRA_N[$i]:-}
${SSH_SSHD_EXTRA:-}
CONF
    ip netns exec "$ns" /usr/sbin/sshd -D -e -f "$SSHD/sshd$i.conf" 2> "$SSHD/sshd$i.log" &
    SSH_PIDS[$i]=$!
    disown "$!"  # no "Killed" note from bash at the teardown
    SSH_ADDR[$i]=$addr
  done
  cat > "$SSHD/ssh_config" <<CONF
Host *
  User root
  IdentityFile $SSHD/id
  IdentitiesOnly yes
  UserKnownHostsFile $SSHD/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  LogLevel ERROR
CONF
  for ((i = 0; i < n; i++)); do
    local t
    for t in $(seq 300); do
      ssh -F "$SSHD/ssh_config" -o BatchMode=yes "${SSH_ADDR[$i]}" true 2>/dev/null && break
      sleep 0.1
    done
    ssh -F "$SSHD/ssh_config" -o BatchMode=yes "${SSH_ADDR[$i]}" true ||
      { cat "$SSHD/sshd$i.log" >&2; ssh_skip "sshd of worker $i did not come up"; }
  done
}

ssh_stop_one() {
  kill "${SSH_PIDS[$1]}" 2>/dev/null
  ip netns pids "${SSH_NS[$1]}" 2>/dev/null | xargs -r kill -9 2>/dev/null
  SSH_PIDS[$1]=
}

ssh_drop() {
  local p
  for p in $(ip netns pids "${SSH_NS[$1]}"); do
    case "$( { tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null)" in
      *"[listener]"*) ;;
      "sshd: "*) kill -9 "$p" ;;
    esac
  done
}

wait_for() {
  local t
  for t in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.1; done
  return 1
}

ssh_link() {
  local f
  f=$(sysctl -n net.ipv4.ip_forward)
  if [ "$f" != 1 ]; then SSH_IPFWD=$f; sysctl -q -w net.ipv4.ip_forward=1; fi
  # Docker's FORWARD policy is DROP.
  if command -v iptables > /dev/null; then
    iptables -I FORWARD -s "10.$SSH_NET.0.0/16" -d "10.$SSH_NET.0.0/16" -j ACCEPT && SSH_FWD=1
  fi
}

ssh_left() {
  local p
  for p in $(ip netns pids "$1" 2>/dev/null); do
    { tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null | grep -e "$2" | sed "s/^/$p: /"
  done
}

# ssh_interrupt SPEC READY: runs `tpuci run --plain SPEC` in the
# background and sends it SIGINT once the shell command READY succeeds
# (a background job of a script ignores SIGINT until tpuci installs its
# handler: READY says the job runs); sets $out and $code.
ssh_interrupt() {
  local pid
  rm -rf .tpuci
  "$TPUCI" run --plain "$1" > "$WORK/interrupt.out" 2>&1 &
  pid=$!
  for _ in $(seq 600); do eval "$2" > /dev/null 2>&1 && break; sleep 0.2; done
  kill -INT "$pid"
  wait "$pid"
  code=$?
  out=$(cat "$WORK/interrupt.out")
}

# The latest run's id (its folder's name).
ssh_run_id() { basename "$(readlink -f "$WORK/.tpuci/runs/latest")"; }
