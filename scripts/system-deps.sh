#!/usr/bin/env bash
# Installs the Debian packages the e2e tests need, when missing: Chromium for the web app's
# browser tests (playwright-core never downloads a browser), qemu + the arm64 C library to run
# the arm64 binary, systemd-analyze to check the unit, curl for install.sh, Prometheus's Python
# client for /metrics, nginx, Caddy and openssl for the proxy configs, podman (with runc) and
# debootstrap to build and run the Containerfile, minisign for signed releases, PostgreSQL for
# the Postgres schema's tests (issue 20; test/pg/cluster.ts starts its own clusters), strace to
# simulate a slow disk.
# Run by .ci/run only (issue 33): no test command changes the machine's packages. A contributor
# runs it by hand, as root, to get what `npm run test:e2e` skips. apt-get may upgrade packages
# already installed that a new one depends on: the end of its output lists every package it
# installed or upgraded, with versions. Without root or apt-get it says what is missing; in CI
# that is a failure.
set -uo pipefail

missing=""
[ -x /usr/bin/chromium ] || missing="$missing chromium"
command -v qemu-aarch64-static >/dev/null 2>&1 || missing="$missing qemu-user-static"
[ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || missing="$missing libc6-arm64-cross"
command -v systemd-analyze >/dev/null 2>&1 || missing="$missing systemd"
command -v curl >/dev/null 2>&1 || command -v wget >/dev/null 2>&1 || missing="$missing curl"
# Prometheus's own Python client parses /metrics in the tests (Debian's python, not a pyenv one).
/usr/bin/python3 -c 'import prometheus_client' >/dev/null 2>&1 || missing="$missing python3-prometheus-client"
# The shipped proxy configs run in front of dist/hark in the tests (test/ops/proxies.test.ts).
command -v nginx >/dev/null 2>&1 || missing="$missing nginx"
command -v caddy >/dev/null 2>&1 || missing="$missing caddy"
command -v openssl >/dev/null 2>&1 || missing="$missing openssl"
# Let's Encrypt's ACME test server for `hark serve --domain` (test/tls/).
command -v pebble >/dev/null 2>&1 || missing="$missing pebble"
# The Containerfile is built and run with podman on a Debian base made by debootstrap
# (test/ops/container-image.test.ts); runc where crun cannot start a container (hybrid cgroups).
command -v podman >/dev/null 2>&1 || missing="$missing podman"
command -v runc >/dev/null 2>&1 || missing="$missing runc"
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing="$missing debootstrap"
# Releases are signed with minisign; install.sh checks them with it, or with openssl.
command -v minisign >/dev/null 2>&1 || missing="$missing minisign"
# The README's backup and restore lines use sudo (test/ops/root-install.test.ts runs them).
command -v sudo >/dev/null 2>&1 || missing="$missing sudo"
# The Postgres tests (test/pg/) run initdb and pg_ctl from Debian's versioned bin directory;
# they are not on PATH, so look there.
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing="$missing postgresql"
# A slow disk is simulated by strace's syscall delay (test/db/slow-disk.test.ts).
command -v strace >/dev/null 2>&1 || missing="$missing strace"
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian packages for the tests:$missing"
  # nginx and caddy would start as system services on ports 80/443; the tests run their own.
  # policy-rc.d (Debian's switch for that) keeps every service down while installing.
  added_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    added_policy=yes
  fi
  before=$(mktemp)
  dpkg-query -W -f '${Package} ${Version}\n' | sort >"$before"
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
  installed=$?
  # What changed on this machine, said plainly: new packages, and upgrades of installed ones.
  dpkg-query -W -f '${Package} ${Version}\n' | sort |
    awk 'NR == FNR { had[$1] = $2; next }
      !($1 in had) { print "system-deps: installed " $1 " " $2; next }
      had[$1] != $2 { print "system-deps: upgraded " $1 " " had[$1] " -> " $2 }' "$before" -
  rm -f "$before"
  # Debian's postgresql-common makes a `main` cluster on install (port 5432); policy-rc.d kept
  # it from starting, but its service would start it at the next boot. The tests start their
  # own throwaway clusters, so the freshly made, empty one is dropped. (Setting
  # create_main_cluster = false in createcluster.conf beforehand would make dpkg ask about a
  # changed conffile on a package not yet installed.)
  case " $missing " in *" postgresql "*)
    for conf in /etc/postgresql/*/main; do
      [ -d "$conf" ] || continue
      ver=$(basename "$(dirname "$conf")")
      pg_dropcluster --stop "$ver" main || echo "system-deps: could not drop cluster $ver/main" >&2
    done ;;
  esac
  [ -n "$added_policy" ] && rm -f /usr/sbin/policy-rc.d
  [ "$installed" -eq 0 ] && exit 0
  echo "system-deps: apt-get install failed" >&2
else
  echo "system-deps: missing$missing (install them with apt-get as root)" >&2
fi
[ "${CI:-}" = "true" ] && exit 1
exit 0
