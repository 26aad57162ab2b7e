#!/bin/sh
# Usage: make-rootfs.sh DIR MIRROR
# A minimal Debian bookworm root file system in DIR, for `docker import`: debootstrap's minbase, the
# host's apt sources and configuration (a snapshot, its proxy or auth settings, its keyrings), and no
# service started by a package's install script (no init runs in a container).
set -eu
dir=$1
mirror=$2

debootstrap --variant=minbase bookworm "$dir" "$mirror"

rm -f "$dir/etc/apt/sources.list"
for entry in /etc/apt/sources.list /etc/apt/sources.list.d /etc/apt/apt.conf /etc/apt/apt.conf.d \
  /etc/apt/auth.conf /etc/apt/auth.conf.d /etc/apt/preferences /etc/apt/preferences.d \
  /etc/apt/trusted.gpg /etc/apt/trusted.gpg.d /etc/apt/keyrings; do
  [ -e "$entry" ] && cp -a "$entry" "$(dirname "$dir$entry")/"
done
# Keyrings the sources name (Signed-By / signed-by=) that live outside /etc/apt.
sed -n -E 's/.*[Ss]igned-[Bb]y(:[[:space:]]*|=)([^] ]+).*/\2/p' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
  | sort -u | while read -r keyring; do
    if [ -f "$keyring" ] && [ ! -e "$dir$keyring" ]; then
      mkdir -p "$(dirname "$dir$keyring")"
      cp -a "$keyring" "$dir$keyring"
    fi
  done

printf '#!/bin/sh\nexit 101\n' > "$dir/usr/sbin/policy-rc.d"
chmod 755 "$dir/usr/sbin/policy-rc.d"

chroot "$dir" apt-get clean
rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin "$dir"/var/log/*.log "$dir"/tmp/*
