#!/usr/bin/env bash
# Builds the test image tpuci-test/busybox:1 from Debian's busybox-static:
# a root with /bin/busybox, its applet links and a minimal /etc, imported
# with `docker import`. Does nothing when the image exists already.
# Needs DOCKER_HOST (or the default socket) and the docker CLI.
set -euo pipefail

image=${TPUCI_BUSYBOX_IMAGE:-tpuci-test/busybox:1}

if docker image inspect "$image" >/dev/null 2>&1; then
  echo "build-busybox: $image exists" >&2
  exit 0
fi

bb=/bin/busybox
if ! [ -x "$bb" ] || ! file -L "$bb" 2>/dev/null | grep -q 'statically linked'; then
  if ! dpkg -s busybox-static >/dev/null 2>&1; then
    echo "build-busybox: installing busybox-static" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y busybox-static >&2 ||
      { apt-get update >&2 && apt-get install -y busybox-static >&2; }
  fi
  bb=$(dpkg -L busybox-static | grep -E '/busybox$' | head -n1)
fi

root=$(mktemp -d /tmp/tpuci-busybox.XXXXXX)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,root,proc,sys,dev,out,work}
chmod 1777 "$root/tmp"
cp "$bb" "$root/bin/busybox"
# Every applet this busybox has, as a link in /bin.
for applet in $("$root/bin/busybox" --list); do
  [ "$applet" = busybox ] && continue
  ln -sf busybox "$root/bin/$applet"
done
cat >"$root/etc/passwd" <<'PW'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PW
cat >"$root/etc/group" <<'GR'
root:x:0:
nogroup:x:65534:
GR
echo "127.0.0.1 localhost" >"$root/etc/hosts"

tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/bin:/sbin:/usr/bin:/usr/sbin' \
  --change 'CMD ["/bin/sh"]' - "$image" >/dev/null
echo "build-busybox: built $image" >&2
