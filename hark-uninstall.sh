#!/bin/sh
# Removes what install.sh installed: the service, the unit, the binary and /etc/hark. The data
# (/var/lib/hark) and the hark user stay unless HARK_PURGE=1 (or --purge) is given.
#
#   sudo hark-uninstall            # keep the data
#   sudo hark-uninstall --purge    # also delete /var/lib/hark and the hark user
#
# Environment: HARK_PURGE=1, HARK_ROOT=/tmp/x (a test prefix), HARK_SKIP_SYSTEMD=1.
# The whole script is one function called on the last line.

hark_uninstall() {
  set -eu
  root=${HARK_ROOT:-}
  purge=${HARK_PURGE:-}
  for arg in "$@"; do
    case "$arg" in
      --purge) purge=1 ;;
      *)
        printf 'hark-uninstall: unknown argument %s (only --purge)\n' "$arg" >&2
        exit 2
        ;;
    esac
  done
  if [ -z "$root" ] && [ "$(id -u)" != 0 ]; then
    printf 'hark-uninstall: run as root\n' >&2
    exit 1
  fi
  if [ -z "${HARK_SKIP_SYSTEMD:-}" ] && command -v systemctl >/dev/null 2>&1; then
    systemctl disable --now hark.service >/dev/null 2>&1 || true
  fi
  rm -f "$root/etc/systemd/system/hark.service"
  rm -rf "$root/etc/systemd/system/hark.service.d"
  if [ -z "${HARK_SKIP_SYSTEMD:-}" ] && command -v systemctl >/dev/null 2>&1; then
    systemctl daemon-reload || true
  fi
  rm -rf "$root/etc/hark"
  rm -f "$root/usr/local/bin/hark" "$root/usr/local/bin/hark-uninstall"
  if [ -n "$purge" ]; then
    rm -rf "$root/var/lib/hark"
    if [ -z "$root" ] && id hark >/dev/null 2>&1; then userdel hark || true; fi
    echo "Removed Hark, its data and the hark user."
  else
    echo "Removed Hark. The data is kept in $root/var/lib/hark (delete it with --purge)."
  fi
}

hark_uninstall "$@"
