#!/bin/sh
# Removes what install.sh installed: the service, the unit and the binary. The configuration
# (/etc/hark), the data (/var/lib/hark) and the hark user stay unless HARK_PURGE=1 (or --purge)
# is given: installing again picks them up as they were.
#
#   sudo hark-uninstall            # keep the configuration and the data
#   sudo hark-uninstall --purge    # also delete /etc/hark, /var/lib/hark and the hark user
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
  # The installer's lock: never remove Hark while an install or upgrade runs.
  lock="$root/run/lock/hark-install"
  mkdir -p "$root/run/lock"
  if ! mkdir "$lock" 2>/dev/null; then
    printf 'hark-uninstall: an install.sh is running (lock %s); wait for it\n' "$lock" >&2
    exit 1
  fi
  trap 'rmdir "$lock" 2>/dev/null' EXIT INT TERM
  if [ -z "${HARK_SKIP_SYSTEMD:-}" ] && command -v systemctl >/dev/null 2>&1; then
    systemctl disable --now hark.service >/dev/null 2>&1 || true
    systemctl disable --now hark-backup.timer >/dev/null 2>&1 || true
    # A backup already running (its unit skips new runs while we hold the lock) finishes first:
    # --purge must not delete the data under it.
    if systemctl is-active --quiet hark-backup.service 2>/dev/null; then
      printf 'Waiting for the running backup (hark-backup.service) to finish ...\n'
      while systemctl is-active --quiet hark-backup.service 2>/dev/null; do sleep 1; done
    fi
  fi
  rm -f "$root/etc/systemd/system/hark.service"
  rm -f "$root/etc/systemd/system/hark-backup.service" "$root/etc/systemd/system/hark-backup.timer"
  rm -rf "$root/etc/systemd/system/hark.service.d"
  rm -f "$root/etc/sysctl.d/60-hark.conf"
  if [ -z "${HARK_SKIP_SYSTEMD:-}" ] && command -v systemctl >/dev/null 2>&1; then
    systemctl daemon-reload || true
  fi
  rm -f "$root/usr/local/bin/hark" "$root/usr/local/bin/hark.previous" "$root/usr/local/bin/hark-uninstall"
  if [ -n "$purge" ]; then
    rm -rf "$root/etc/hark" "$root/var/lib/hark"
    if [ -z "$root" ] && id hark >/dev/null 2>&1; then userdel hark || true; fi
    echo "Removed Hark, its configuration, its data and the hark user."
  else
    echo "Removed Hark. Kept the configuration in $root/etc/hark and the data in $root/var/lib/hark (delete both with --purge)."
  fi
}

hark_uninstall "$@"
