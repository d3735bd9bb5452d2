#!/bin/sh
# Hark installer: the hark binary, a hark system user, /var/lib/hark, /etc/hark/hark.env and a
# hardened systemd unit, started, with the setup link printed at the end.
#
#   curl -fsSL https://hark.example/install.sh | sudo sh
#   curl -fsSL https://hark.example/install.sh | sudo sh -s -- --domain hark.example.com
#
# Options:
#   --domain NAME[,NAME...]     serve HTTPS on 443 for NAME with a certificate Hark gets itself
#                               (ACME, Let's Encrypt; port 80 answers the challenges and
#                               redirects): writes HARK_DOMAIN into /etc/hark/hark.env (on a
#                               re-run too) and gives the unit CAP_NET_BIND_SERVICE, the one
#                               capability binding ports below 1024 needs. Same as HARK_DOMAIN=.
#   --acme-email EMAIL          the address Let's Encrypt writes to about the certificate
#                               (HARK_ACME_EMAIL in hark.env). Same as HARK_ACME_EMAIL=.
#
# Run it again to upgrade: the binary is replaced (checksum-verified), a backup is taken first,
# the service restarts only if something changed, and data and configuration are kept.
# Remove with hark-uninstall (installed next to hark); data stays unless asked.
#
# Environment overrides (all optional):
#   HARK_VERSION=1.2.3          version to install (default: latest)
#   HARK_BASE_URL_DOWNLOAD=URL  where releases live; files are fetched from
#                               $HARK_BASE_URL_DOWNLOAD/$HARK_VERSION/<name>
#   HARK_BINARY=/path/to/hark   install this local file instead of downloading; it is verified
#                               against a SHA256SUMS next to it when there is one
#   HARK_HOST, HARK_PORT, HARK_BASE_URL
#                               written into /etc/hark/hark.env on the first install only
#   HARK_SKIP_START=1           install everything but do not start (or restart) the service
#   HARK_SKIP_SYSTEMD=1         write the unit file but never call systemctl
#   HARK_SKIP_USER=1            do not create the hark user or chown anything
#   HARK_SKIP_BACKUP=1          no backup of the data before an upgrade
#   HARK_ROOT=/tmp/x            install under this prefix (tests; implies HARK_SKIP_USER=1)
#   HARK_ARCH=aarch64           pretend `uname -m` said this (tests)
#   HARK_CPUINFO=/path          read CPU flags from this file instead of /proc/cpuinfo (tests)
#   HARK_HEALTH_WAIT=30         seconds to wait for /health after a (re)start
#   HARK_RELEASE_PUBKEY=RW...   the minisign public key releases are signed with (a fork's own;
#                               tests); default: Hark's, below
#   HARK_VERIFY_WITH=openssl    check signatures with openssl even where minisign is installed
#
# Signed releases: SHA256SUMS is signed with minisign (SHA256SUMS.minisig, its trusted comment
# naming the version). A download is installed only if that signature verifies under Hark's
# public key (with minisign, else with openssl 3), the comment names the version asked for, and
# the binary matches SHA256SUMS; anything else is refused before a file is touched. A local
# HARK_BINARY is the operator's own: its SHA256SUMS and signature are checked when present.
#
# A new binary is first checked, on every init system, with `hark serve --check` (config, data,
# the schema upgrade tried on a copy); one that fails it is not installed, the installed one
# stays, and install.sh exits 1 saying why.
# An upgrade whose new binary does not answer /health is rolled back to the previous binary
# (kept as hark.previous), saying so. Without a running systemd, everything is installed and
# the command to run Hark is printed. One run at a time: a lock refuses a second.
#
# The whole script is one function called on the last line: a download cut short runs nothing.

hark_install() {
  set -eu

  default_base='https://github.com/hark/hark/releases/download'
  # Hark's release key (minisign). The same line is in the README; rotating it is described in
  # docs/operations.md ("Signed releases").
  default_pubkey='RWStky1+8ubaofZMBYDqepE/yozPgpDxkQBmjttPt0EVOHaVexta7e4B'
  pubkey=${HARK_RELEASE_PUBKEY:-$default_pubkey}
  version=${HARK_VERSION:-latest}
  base=${HARK_BASE_URL_DOWNLOAD:-$default_base}
  root=${HARK_ROOT:-}
  skip_user=${HARK_SKIP_USER:-}
  [ -n "$root" ] && skip_user=${skip_user:-1}

  bin_dir="$root/usr/local/bin"
  bin="$bin_dir/hark"
  etc_dir="$root/etc/hark"
  env_file="$etc_dir/hark.env"
  unit_dir="$root/etc/systemd/system"
  unit="$unit_dir/hark.service"
  data_dir="$root/var/lib/hark"

  say() { printf '%s\n' "$*"; }
  die() {
    printf 'install.sh: %s\n' "$*" >&2
    exit 1
  }

  # --- options --------------------------------------------------------------------------------
  domain=${HARK_DOMAIN:-}
  acme_email=${HARK_ACME_EMAIL:-}
  while [ $# -gt 0 ]; do
    case "$1" in
      --domain | --acme-email)
        [ $# -ge 2 ] || die "$1 needs a value"
        [ "$1" = --domain ] && domain=$2 || acme_email=$2
        shift 2
        ;;
      --domain=*) domain=${1#--domain=} && shift ;;
      --acme-email=*) acme_email=${1#--acme-email=} && shift ;;
      *) die "unknown argument $1 (install.sh [--domain NAME[,NAME...]] [--acme-email EMAIL])" ;;
    esac
  done
  # The server checks the names themselves; here only what would break the env file's line.
  case "$domain" in
    *[!A-Za-z0-9.,-]*) die "--domain $domain: give DNS names, comma-separated (hark.example.com)" ;;
  esac
  case "$acme_email" in
    *[!A-Za-z0-9.@+_-]*) die "--acme-email $acme_email is not an email address" ;;
  esac

  # --- platform -------------------------------------------------------------------------------
  [ "$(uname -s)" = Linux ] || die "Hark runs on Linux only (this is $(uname -s))"
  arch=${HARK_ARCH:-$(uname -m)}
  cpuinfo=${HARK_CPUINFO:-/proc/cpuinfo}
  case "$arch" in
    x86_64 | amd64)
      if grep -qw avx2 "$cpuinfo" 2>/dev/null; then
        asset=hark-linux-x64
      else
        asset=hark-linux-x64-baseline
      fi
      ;;
    aarch64 | arm64)
      asset=hark-linux-arm64
      # A 64-bit kernel under a 32-bit userland (older Raspberry Pi OS) says aarch64 too.
      if [ -z "${HARK_ARCH:-}" ] && [ "$(getconf LONG_BIT 2>/dev/null || echo 64)" = 32 ]; then
        die "this system runs a 32-bit userland on a 64-bit kernel; Hark needs a 64-bit OS (e.g. Raspberry Pi OS 64-bit)"
      fi
      ;;
    armv6* | armv7* | armv8l | armhf | arm)
      die "32-bit ARM ($arch) is not supported: Hark needs a 64-bit (aarch64) OS. On a Raspberry Pi 3, 4 or 5, install Raspberry Pi OS (64-bit)."
      ;;
    i386 | i486 | i586 | i686)
      die "32-bit x86 ($arch) is not supported: Hark needs x86_64 or aarch64"
      ;;
    *)
      die "unsupported architecture $arch: Hark ships for x86_64 and aarch64"
      ;;
  esac

  if [ -z "$root" ] && [ "$(id -u)" != 0 ]; then
    die "run as root (curl -fsSL .../install.sh | sudo sh)"
  fi

  # One run at a time (mkdir is atomic): a second install, or an uninstall, would race this one.
  lock="$root/run/lock/hark-install"
  mkdir -p "$root/run/lock"
  mkdir "$lock" 2>/dev/null ||
    die "another install.sh or hark-uninstall is running (lock $lock); wait for it, or remove $lock if none is"

  sha256() {
    if command -v sha256sum >/dev/null 2>&1; then
      sha256sum "$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then
      shasum -a 256 "$1" | cut -d' ' -f1
    else
      die "need sha256sum (coreutils) or shasum to verify the download"
    fi
  }

  fetch() { # URL FILE
    if command -v curl >/dev/null 2>&1; then
      curl -fsSL --retry 3 -o "$2" "$1" || die "download failed: $1"
    elif command -v wget >/dev/null 2>&1; then
      wget -q -O "$2" "$1" || die "download failed: $1"
    else
      die "need curl or wget to download Hark"
    fi
  }

  # Prints the expected hash of NAME from a SHA256SUMS file, or nothing.
  expected_sum() { # SUMS NAME
    awk -v n="$2" '$2 == n || $2 == "*" n { print $1; exit }' "$1"
  }

  verify() { # FILE NAME SUMS
    want=$(expected_sum "$3" "$2")
    [ -n "$want" ] || die "SHA256SUMS has no entry for $2"
    got=$(sha256 "$1")
    [ "$got" = "$want" ] || die "checksum mismatch for $2: expected $want, got $got. Nothing was installed."
  }

  # Checks SIG (minisign format) over FILE under $pubkey; prints the trusted comment.
  verify_signature() { # FILE SIG
    [ -f "$2" ] || die "no signature for SHA256SUMS (SHA256SUMS.minisig); refusing an unsigned release"
    [ "$(sed -n 3p "$2" | cut -c1-17)" = 'trusted comment: ' ] || die "SHA256SUMS.minisig is not a minisign signature"
    if [ "${HARK_VERIFY_WITH:-}" != openssl ] && command -v minisign >/dev/null 2>&1; then
      minisign -q -V -m "$1" -x "$2" -P "$pubkey" >/dev/null 2>&1 ||
        die "the signature of SHA256SUMS does not verify under Hark's release key: the release was tampered with or not made by Hark. Nothing was installed."
    elif command -v openssl >/dev/null 2>&1 && openssl version 2>/dev/null | grep -q '^OpenSSL [3-9]'; then
      verify_with_openssl "$1" "$2" ||
        die "the signature of SHA256SUMS does not verify under Hark's release key: the release was tampered with or not made by Hark. Nothing was installed."
    else
      die "need minisign or OpenSSL 3 to check the release's signature (apt-get install minisign)"
    fi
    sed -n 3p "$2" | cut -c18-
  }

  # minisign's format, checked with OpenSSL 3 (Ed25519): the key line is "Ed", a key id and the
  # public key; the signature line is "ED" (BLAKE2b-512 of the file signed) or "Ed" (the file
  # itself), the key id and the signature; the global signature covers that signature and the
  # trusted comment, so the comment cannot be swapped.
  verify_with_openssl() { # FILE SIG
    v="$tmp/verify"
    mkdir -p "$v"
    printf '%s' "$pubkey" | base64 -d >"$v/key" 2>/dev/null || return 1
    sed -n 2p "$2" | base64 -d >"$v/sig" 2>/dev/null || return 1
    sed -n 4p "$2" | base64 -d >"$v/global" 2>/dev/null || return 1
    [ "$(wc -c <"$v/key")" -eq 42 ] && [ "$(wc -c <"$v/sig")" -eq 74 ] || return 1
    [ "$(wc -c <"$v/global")" -eq 64 ] && [ "$(head -c 2 "$v/key")" = Ed ] || return 1
    # The key ids must match: a signature by another key fails here, clearly.
    [ "$(head -c 10 "$v/key" | tail -c 8 | od -An -tx1)" = "$(head -c 10 "$v/sig" | tail -c 8 | od -An -tx1)" ] || return 1
    # An Ed25519 SubjectPublicKeyInfo (DER) around the raw 32-byte key.
    printf '\060\052\060\005\006\003\053\145\160\003\041\000' >"$v/key.der"
    tail -c 32 "$v/key" >>"$v/key.der"
    tail -c 64 "$v/sig" >"$v/sig64"
    case "$(head -c 2 "$v/sig")" in
      ED) openssl dgst -blake2b512 -binary "$1" >"$v/message" || return 1 ;;
      Ed) cp "$1" "$v/message" ;;
      *) return 1 ;;
    esac
    ed25519() { openssl pkeyutl -verify -pubin -keyform DER -inkey "$v/key.der" -rawin -in "$1" -sigfile "$2" >/dev/null 2>&1; }
    ed25519 "$v/message" "$v/sig64" || return 1
    { cat "$v/sig64"; sed -n 3p "$2" | cut -c18- | tr -d '\n'; } >"$v/comment"
    ed25519 "$v/comment" "$v/global"
  }

  # SHA256SUMS is Hark's for this version: signed, and the signed comment names the version.
  verify_sums() { # SUMS SIG
    comment=$(verify_signature "$1" "$2") || exit 1
    signed_version=$(printf '%s\n' "$comment" | sed -n 's/^hark \([^ ]*\) .*/\1/p')
    [ -n "$signed_version" ] || die "the signed comment does not name a Hark version: $comment"
    if [ "$version" != latest ] && [ "$signed_version" != "$version" ]; then
      die "the signature is for hark $signed_version, not $version: an older release offered in its place? Nothing was installed."
    fi
    say "Verified the signature of SHA256SUMS (hark $signed_version, Hark's release key)."
  }

  tmp=$(mktemp -d "${TMPDIR:-/tmp}/hark-install.XXXXXX")
  trap 'rm -rf "$tmp"; rmdir "$lock" 2>/dev/null' EXIT INT TERM

  # --- get the binary (and the uninstaller) ---------------------------------------------------
  if [ -n "${HARK_BINARY:-}" ]; then
    [ -f "$HARK_BINARY" ] || die "HARK_BINARY=$HARK_BINARY is not a file"
    cp "$HARK_BINARY" "$tmp/hark"
    src_dir=$(dirname "$HARK_BINARY")
    if [ -f "$src_dir/SHA256SUMS" ]; then
      if [ -f "$src_dir/SHA256SUMS.minisig" ]; then
        verify_sums "$src_dir/SHA256SUMS" "$src_dir/SHA256SUMS.minisig"
      fi
      verify "$tmp/hark" "$(basename "$HARK_BINARY")" "$src_dir/SHA256SUMS"
      say "Verified $HARK_BINARY against $src_dir/SHA256SUMS."
    else
      say "Note: no SHA256SUMS next to $HARK_BINARY; installing it unverified."
    fi
    if [ -f "$src_dir/hark-uninstall.sh" ]; then cp "$src_dir/hark-uninstall.sh" "$tmp/uninstall"; fi
  else
    # GitHub serves the newest release's files at releases/latest/download/NAME.
    if [ "$version" = latest ] && [ -z "${HARK_BASE_URL_DOWNLOAD:-}" ]; then
      url="https://github.com/hark/hark/releases/latest/download"
    else
      url="$base/$version"
    fi
    say "Downloading $asset ($version) from $url ..."
    fetch "$url/SHA256SUMS" "$tmp/SHA256SUMS"
    fetch "$url/SHA256SUMS.minisig" "$tmp/SHA256SUMS.minisig"
    verify_sums "$tmp/SHA256SUMS" "$tmp/SHA256SUMS.minisig"
    fetch "$url/$asset" "$tmp/hark"
    verify "$tmp/hark" "$asset" "$tmp/SHA256SUMS"
    fetch "$url/hark-uninstall.sh" "$tmp/uninstall"
    verify "$tmp/uninstall" hark-uninstall.sh "$tmp/SHA256SUMS"
  fi
  chmod 0755 "$tmp/hark"
  native=yes
  if [ -n "${HARK_ARCH:-}" ] && [ "$HARK_ARCH" != "$(uname -m)" ]; then native=; fi
  new_version=unknown
  if [ -n "$native" ]; then
    new_version=$("$tmp/hark" --version 2>/dev/null) || die "the downloaded hark does not run on this machine ($asset)"
  fi

  # --- user, directories, configuration --------------------------------------------------------
  if [ -z "$skip_user" ] && ! id hark >/dev/null 2>&1; then
    useradd --system --user-group --home-dir /var/lib/hark --no-create-home \
      --shell /usr/sbin/nologin --comment 'Hark server' hark
    say "Created the system user hark."
  fi
  mkdir -p "$bin_dir" "$etc_dir" "$unit_dir" "$data_dir"
  chmod 0700 "$data_dir"
  [ -z "$skip_user" ] && chown hark:hark "$data_dir"

  if [ ! -f "$env_file" ]; then
    write_env >"$tmp/hark.env"
    sed -i "s#^HARK_DATA=.*#HARK_DATA=$data_dir#" "$tmp/hark.env"
    [ -n "${HARK_HOST:-}" ] && sed -i "s#^HARK_HOST=.*#HARK_HOST=$HARK_HOST#" "$tmp/hark.env"
    [ -n "${HARK_PORT:-}" ] && sed -i "s#^HARK_PORT=.*#HARK_PORT=$HARK_PORT#" "$tmp/hark.env"
    [ -n "${HARK_BASE_URL:-}" ] && sed -i "s#^\#HARK_BASE_URL=.*#HARK_BASE_URL=$HARK_BASE_URL#" "$tmp/hark.env"
    [ -n "$domain" ] && set_env "$tmp/hark.env" HARK_DOMAIN "$domain"
    [ -n "$acme_email" ] && set_env "$tmp/hark.env" HARK_ACME_EMAIL "$acme_email"
    install -m 0640 "$tmp/hark.env" "$env_file"
    [ -z "$skip_user" ] && chown root:hark "$env_file"
    say "Wrote $env_file."
  else
    say "Kept $env_file."
    # Asked for on a re-run (HTTPS added later): the one line changes, and the service restarts.
    for pair in "HARK_DOMAIN=$domain" "HARK_ACME_EMAIL=$acme_email"; do
      name=${pair%%=*}
      value=${pair#*=}
      if [ -n "$value" ] && [ "$(env_value "$name")" != "$value" ]; then
        set_env "$env_file" "$name" "$value"
        config_changed=1
        say "Set $name=$value in $env_file."
      fi
    done
  fi
  # What the configuration says from now on (a flag, or an earlier install's).
  domain=$(env_value HARK_DOMAIN)
  if [ -n "$domain" ]; then
    say "HTTPS: Hark answers at https://${domain%%,*} with a certificate it gets from Let's Encrypt;"
    say "  ${domain%%,*} must point at this machine, and ports 80 and 443 be open to the internet."
  fi

  # --- binary ---------------------------------------------------------------------------------
  changed=${config_changed:-}
  old_version=
  if [ -f "$bin" ] && cmp -s "$tmp/hark" "$bin"; then
    say "hark $new_version is already installed at $bin."
  else
    if [ -f "$bin" ]; then old_version=$("$bin" --version 2>/dev/null || echo unknown); fi
    cp "$tmp/hark" "$bin.new"
    chmod 0755 "$bin.new"
    # Before anything is replaced, whatever the init system: a binary that cannot start on this
    # configuration and data is never put in place.
    check_new_binary
    if [ -n "$old_version" ]; then
      backup_before_upgrade
      # Kept for a roll-back if the new binary does not come up (and for one by hand).
      cp -p "$bin" "$bin.previous"
    fi
    mv -f "$bin.new" "$bin"
    changed=1
    if [ -n "$old_version" ]; then
      say "Upgraded hark $old_version -> $new_version at $bin."
    else
      say "Installed hark $new_version at $bin."
    fi
  fi
  if [ -f "$tmp/uninstall" ]; then install -m 0755 "$tmp/uninstall" "$bin_dir/hark-uninstall"; fi

  # --- systemd --------------------------------------------------------------------------------
  # With HTTPS on 80 and 443 (HARK_DOMAIN), binding them is the one capability the unit grants.
  if [ -n "$domain" ]; then
    write_unit | sed -e 's/^CapabilityBoundingSet=$/CapabilityBoundingSet=CAP_NET_BIND_SERVICE/' \
      -e 's/^AmbientCapabilities=$/AmbientCapabilities=CAP_NET_BIND_SERVICE/' >"$tmp/hark.service"
  else
    write_unit >"$tmp/hark.service"
  fi
  if ! cmp -s "$tmp/hark.service" "$unit"; then
    install -m 0644 "$tmp/hark.service" "$unit"
    changed=1
    say "Wrote $unit."
  fi
  # A certificate swap opens a new listener and closes the old one: with tcp_migrate_req the
  # kernel hands the connections queued on the closing one to the new one instead of
  # resetting them (docs/operations.md "HTTPS"). Applied now where allowed, and at every boot.
  if [ -n "$domain" ]; then
    sysctl_file="$root/etc/sysctl.d/60-hark.conf"
    if [ ! -f "$sysctl_file" ]; then
      mkdir -p "$root/etc/sysctl.d"
      printf '# Written by Hark'"'"'s install.sh: no connection reset when a certificate is swapped in.\nnet.ipv4.tcp_migrate_req = 1\n' >"$sysctl_file"
      say "Wrote $sysctl_file."
      if [ -z "$root" ]; then sysctl -q -p "$sysctl_file" 2>/dev/null || say "(applies at the next boot)"; fi
    fi
  fi
  # The daily backup (newest 7 kept in /var/lib/hark/backups); a timer, so no restart needed.
  write_backup_service >"$tmp/hark-backup.service"
  write_backup_timer >"$tmp/hark-backup.timer"
  for u in hark-backup.service hark-backup.timer; do
    if ! cmp -s "$tmp/$u" "$unit_dir/$u"; then
      install -m 0644 "$tmp/$u" "$unit_dir/$u"
      say "Wrote $unit_dir/$u."
    fi
  done

  if [ -n "${HARK_SKIP_SYSTEMD:-}" ]; then
    say "Skipped systemd (HARK_SKIP_SYSTEMD). Run: $bin serve --config $env_file"
    return 0
  fi
  # systemctl may be installed where systemd is not running (a container, WSL): it would fail.
  if ! command -v systemctl >/dev/null 2>&1 || [ ! -d "$root/run/systemd/system" ]; then
    if [ -n "$changed" ] && [ -n "$old_version" ]; then
      say "systemd is not running here: a hark already running keeps $old_version until it is restarted."
    fi
    say "systemd is not running here, so Hark was installed but not started. Run it with:"
    if [ -z "$skip_user" ]; then
      say "  runuser -u hark -- $bin serve --config $env_file"
    else
      say "  $bin serve --config $env_file"
    fi
    return 0
  fi
  systemctl daemon-reload
  systemctl enable hark.service >/dev/null 2>&1 || systemctl enable hark.service
  systemctl enable --now hark-backup.timer >/dev/null 2>&1 || systemctl enable --now hark-backup.timer
  if [ -n "${HARK_SKIP_START:-}" ]; then
    say "Not started (HARK_SKIP_START). Start with: systemctl start hark"
    return 0
  fi
  # A backup that started before our lock finishes before the service restarts under it.
  if systemctl is-active --quiet hark-backup.service 2>/dev/null; then
    say "Waiting for the running backup (hark-backup.service) to finish ..."
    while systemctl is-active --quiet hark-backup.service 2>/dev/null; do sleep 1; done
  fi
  touch "$tmp/started"
  if [ -n "$changed" ]; then
    systemctl restart hark.service
    say "Started the hark service."
  else
    systemctl start hark.service
    say "Nothing changed; the hark service keeps running."
  fi
  if ! healthy; then
    if [ -n "$old_version" ] && [ -f "$bin.previous" ]; then
      say "hark $new_version did not answer $health; rolling back to $old_version."
      systemctl stop hark.service || true
      mv -f "$bin.previous" "$bin"
      systemctl start hark.service
      if healthy; then
        say "Rolled back: hark $old_version is running again, on the data as it was. See why the upgrade failed: journalctl -u hark -n 50"
      else
        say "hark $old_version does not answer either; see: journalctl -u hark -n 50"
      fi
    else
      say "Hark did not answer $health; see: journalctl -u hark -n 50"
    fi
    exit 1
  fi
  report
}

# `hark serve --check` with the new binary ($bin.new), as the service's user and with only the
# config file, as the unit runs it: the config loads, the data opens and the schema upgrade the
# server would make at start applies (tried on a copy). On failure the new binary is removed, the
# installed one stays, and the check's own words say why. A binary of another architecture
# cannot be run here, and one from before --check existed is installed unchecked, saying so.
check_new_binary() {
  [ -n "$native" ] || return 0
  if ! "$bin.new" serve --help 2>/dev/null | grep -q -- '--check'; then
    say "Note: hark $new_version has no serve --check; installing it unchecked."
    return 0
  fi
  if as_hark env -i PATH="$PATH" "$bin.new" serve --config "$env_file" --check >"$tmp/check.out" 2>&1; then
    say "Checked hark $new_version against $env_file and its data (hark serve --check)."
    return 0
  fi
  rm -f "$bin.new"
  if [ -n "$old_version" ]; then
    printf 'install.sh: hark %s cannot start on this configuration and data, so it was not installed; hark %s stays at %s. hark serve --check said:\n' "$new_version" "$old_version" "$bin" >&2
  else
    printf 'install.sh: hark %s cannot start on this configuration and data, so it was not installed. hark serve --check said:\n' "$new_version" >&2
  fi
  sed 's/^/  /' "$tmp/check.out" >&2
  exit 1
}

# Before replacing a binary, a backup of the data, so a failed upgrade can be rolled back
# (restore it with the old binary). Keeps the three newest.
backup_before_upgrade() {
  [ -n "${HARK_SKIP_BACKUP:-}" ] && return 0
  [ -f "$data_dir/hark.db" ] || return 0
  backups="$data_dir/backups"
  mkdir -p "$backups"
  [ -z "$skip_user" ] && chown hark:hark "$backups"
  file="$backups/pre-upgrade-$(date -u +%Y%m%dT%H%M%SZ).tar"
  if as_hark "$bin" admin backup "$file" --data "$data_dir" >/dev/null 2>"$tmp/backup.err"; then
    say "Backed up the data to $file."
    # shellcheck disable=SC2012
    ls -1t "$backups"/pre-upgrade-*.tar 2>/dev/null | tail -n +4 | while read -r old; do rm -f "$old"; done
  else
    say "Warning: the pre-upgrade backup failed ($(head -n 1 "$tmp/backup.err")); continuing."
  fi
}

# The value of NAME=... in the env file (the last active line), or nothing.
env_value() { # NAME
  [ -f "$env_file" ] || return 0
  sed -n "s/^$1=//p" "$env_file" | tail -n 1
}

# Sets NAME=VALUE in FILE: replaces its line (or the commented-out one), else appends it.
set_env() { # FILE NAME VALUE
  if grep -q "^$2=" "$1"; then
    sed -i "s#^$2=.*#$2=$3#" "$1"
  elif grep -q "^#$2=" "$1"; then
    sed -i "s#^\#$2=.*#$2=$3#" "$1"
  else
    printf '%s=%s\n' "$2" "$3" >>"$1"
  fi
}

as_hark() {
  if [ -z "$skip_user" ]; then runuser -u hark -- "$@"; else "$@"; fi
}

# Where Hark listens, from the configuration (read by the new binary, or the previous one if the
# new one cannot even do that); then waits up to HARK_HEALTH_WAIT seconds for /health.
healthy() {
  cfg=$(env -i PATH="$PATH" "$bin" serve --config "$env_file" --print-config 2>/dev/null) ||
    cfg=$(env -i PATH="$PATH" "$bin.previous" serve --config "$env_file" --print-config 2>/dev/null) ||
    cfg=
  port=$(printf '%s\n' "$cfg" | sed -n 's/^HARK_PORT=\([0-9]*\).*/\1/p')
  host=$(printf '%s\n' "$cfg" | sed -n 's/^HARK_HOST=\([^ ]*\).*/\1/p')
  public=$(printf '%s\n' "$cfg" | sed -n 's/^HARK_BASE_URL=\([^ ]*\).*/\1/p')
  case "$host" in 0.0.0.0 | :: | '') host=127.0.0.1 ;; *:*) host="[$host]" ;; esac
  health="http://$host:${port:-8080}/health"
  # With HTTPS, port 80 answers (the ACME challenges, a redirect to https) from the start, even
  # before the certificate is issued: any HTTP answer there says the server is up.
  if [ -n "$domain" ]; then
    health="http://$host:80/health"
    case "$public" in https://*) ;; *) public="https://${domain%%,*}" ;; esac
  fi
  i=0
  while [ $i -lt $((${HARK_HEALTH_WAIT:-30} * 2)) ]; do
    if [ -n "$domain" ] && command -v curl >/dev/null 2>&1; then
      curl -sS -o /dev/null "$health" 2>/dev/null && return 0
    elif [ -n "$domain" ]; then
      wget -S -q --max-redirect=0 -O /dev/null "$health" 2>&1 | grep -q 'HTTP/' && return 0
    elif command -v curl >/dev/null 2>&1; then
      curl -fsS -o /dev/null "$health" 2>/dev/null && return 0
    else
      wget -q -O /dev/null "$health" 2>/dev/null && return 0
    fi
    i=$((i + 1))
    sleep 0.5
  done
  return 1
}

# Prints where Hark is and, if setup is pending, the one-time setup link: the one this start
# wrote (an older file would hold a link the restart replaced), else where to find it.
report() {
  say "Hark is running: $public"
  token_file="$data_dir/setup-token"
  # After a restart the server writes a new link just after it starts listening.
  fresh() { [ -z "$changed" ] || [ -n "$(find "$token_file" -newer "$tmp/started" 2>/dev/null)" ]; }
  i=0
  while [ -f "$token_file" ] && ! fresh && [ $i -lt 10 ]; do
    sleep 0.5
    i=$((i + 1))
  done
  if [ -f "$token_file" ] && fresh; then
    say ""
    say "Finish setup in your browser (one-time link, keep it private):"
    say "  $(cat "$token_file")"
  elif [ -f "$token_file" ]; then
    say ""
    say "Finish setup in your browser: the one-time link is in $token_file"
  fi
  say ""
  say "Config: $env_file   Data: $data_dir   Logs: journalctl -u hark -f"
  say "Admin:  sudo -u hark hark admin --help"
}

write_env() {
  cat <<'HARK_ENV'
# Hark configuration, read by `hark serve --config /etc/hark/hark.env` (the systemd unit).
# One NAME=value per line. Precedence: flag > environment variable > this file > default.
# Check the effective values:  hark serve --config /etc/hark/hark.env --print-config
# Apply a change:              systemctl restart hark
# install.sh writes this file once; upgrades never touch it.

# Data directory (database and files). The unit makes only /var/lib/hark writable; another path
# also needs ReadWritePaths= in a drop-in (systemctl edit hark).
HARK_DATA=/var/lib/hark

# Address and port to listen on. Behind a reverse proxy on this machine, use 127.0.0.1.
HARK_HOST=0.0.0.0
HARK_PORT=8080

# HTTPS by Hark itself (docs/operations.md, "HTTPS"): a certificate obtained from Let's Encrypt
# (or the CA named below) for these names, renewed by itself; port 443 serves, port 80 answers
# the CA and redirects to https. The base URL becomes https://FIRST-NAME. Needs the DNS name
# pointing here and CAP_NET_BIND_SERVICE (install.sh --domain sets both up in the unit).
#HARK_DOMAIN=hark.example.com
#HARK_ACME_EMAIL=you@example.com
#HARK_ACME_DIRECTORY=https://acme-v02.api.letsencrypt.org/directory
#HARK_ACME_CA=/etc/hark/private-ca.pem
#HARK_HTTP_PORT=80
# Or your own certificate (certbot's fullchain.pem and privkey.pem), reloaded when it changes
# or on `systemctl reload hark`.
#HARK_TLS_CERT=/etc/letsencrypt/live/hark.example.com/fullchain.pem
#HARK_TLS_KEY=/etc/letsencrypt/live/hark.example.com/privkey.pem

# The public URL people open; links and the setup link are built from it.
#HARK_BASE_URL=https://hark.example.com

# Agent writes per minute per channel (0 = off).
#HARK_WRITE_LIMIT=120

# Long-polls one token or browser session holds at once; at the bound its oldest is answered
# early, empty (0 = no bound: only for a benchmark holding thousands of polls on one token).
#HARK_MAX_HELD_POLLS=20

# Largest upload (26214400, 512k, 25MiB). Keep the proxy's body limit above it.
#HARK_MAX_FILE_SIZE=25MiB

# Keep uploaded files in an S3 bucket instead of the data directory (docs/scaling.md, "Files on
# S3"). Key and secret percent-encoded; tls=false for plain http. Checked at start: a bucket
# that cannot be reached stops the start. `hark admin backup` then refuses (see the docs).
#HARK_S3_URL=s3://ACCESS_KEY:SECRET@s3.eu-central-1.amazonaws.com/my-bucket/hark?region=eu-central-1

# A Postgres database (docs/scaling.md) holding the records instead of the data directory's
# SQLite file: every instance pointed at it (and at one HARK_S3_URL) serves the same people.
# `hark admin migrate-to` copies an existing data directory into it. Checked at start.
#HARK_DATABASE_URL=postgres://hark:PASSWORD@db.example.com/hark

# true to share the port with other instances on this machine (SO_REUSEPORT; Postgres mode):
# the kernel spreads the connections among them.
#HARK_REUSE_PORT=false

# true only when Hark is reachable solely through one reverse proxy that appends the client's
# address to X-Forwarded-For; otherwise anyone could claim any address.
#HARK_TRUST_PROXY=false

# Email for login codes (and, later, notifications). Unset: passkeys only.
#HARK_SMTP_URL=smtps://user:password@smtp.example.com:465
#HARK_SMTP_FROM=hark@example.com

# Push endpoint hosts allowed although private or plain http (host or host:port, comma list):
# a self-hosted push service on the LAN. Browsers' own push services need nothing here.
#HARK_PUSH_ALLOW_HOSTS=push.lan:8443

# Prometheus metrics at GET /metrics. Without a token, only a scraper on this machine talking to
# Hark directly may read them (not through the proxy); with one, send it as a bearer token.
#HARK_METRICS=false
#HARK_METRICS_TOKEN=a-long-random-string

# text (a line per event) or json (one object per line, for a log shipper).
#HARK_LOG_FORMAT=text
HARK_ENV
}

write_unit() {
  cat <<'HARK_UNIT'
# Hark: installed by install.sh as /etc/systemd/system/hark.service.
# Local changes belong in a drop-in (systemctl edit hark), which upgrades keep.
[Unit]
Description=Hark message channel server
Documentation=https://github.com/hark/hark#readme
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=hark
Group=hark
ExecStart=/usr/local/bin/hark serve --config /etc/hark/hark.env
# `systemctl reload hark`: re-reads HARK_TLS_CERT/HARK_TLS_KEY (nothing else reloads).
ExecReload=/bin/kill -HUP $MAINPID
WorkingDirectory=/var/lib/hark
# SIGTERM answers held long-polls, then exits 0.
KillSignal=SIGTERM
TimeoutStopSec=20
Restart=on-failure
RestartSec=2s
# Thousands of long-polls are thousands of sockets.
LimitNOFILE=65536

# /var/lib/hark, created and owned for the hark user; the only writable path.
StateDirectory=hark
StateDirectoryMode=0700
UMask=0077

# Hardening. No MemoryDenyWriteExecute=: Bun's JIT needs writable+executable memory.
NoNewPrivileges=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectSystem=strict
ProtectHome=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
LockPersonality=yes
RemoveIPC=yes
CapabilityBoundingSet=
AmbientCapabilities=
SystemCallArchitectures=native

[Install]
WantedBy=multi-user.target
HARK_UNIT
}

write_backup_service() {
  cat <<'HARK_BACKUP_SERVICE'
# Hark's daily backup: installed by install.sh as /etc/systemd/system/hark-backup.service and run
# by hark-backup.timer. A snapshot taken while the server runs, named by its UTC time, in
# /var/lib/hark/backups; the newest 7 are kept (change --keep in a drop-in: systemctl edit
# hark-backup). Copy them off the machine too: a backup on the same disk survives mistakes, not
# the disk.
[Unit]
Description=Hark backup
Documentation=https://github.com/hark/hark/blob/main/docs/operations.md#backup-and-restore

[Service]
Type=oneshot
User=hark
Group=hark
# Not while install.sh or hark-uninstall runs (their lock): the next day's run takes it.
ExecCondition=/bin/sh -c 'test ! -d /run/lock/hark-install'
ExecStart=/usr/local/bin/hark admin backup --config /etc/hark/hark.env --dir /var/lib/hark/backups --keep 7
WorkingDirectory=/var/lib/hark
UMask=0077
Nice=10
IOSchedulingClass=idle
NoNewPrivileges=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectSystem=strict
ReadWritePaths=/var/lib/hark
ProtectHome=yes
RestrictAddressFamilies=AF_UNIX
CapabilityBoundingSet=
HARK_BACKUP_SERVICE
}

write_backup_timer() {
  cat <<'HARK_BACKUP_TIMER'
# Runs hark-backup.service once a day (a missed run, the machine being off, runs at boot).
[Unit]
Description=Daily Hark backup

[Timer]
OnCalendar=daily
RandomizedDelaySec=1h
Persistent=true

[Install]
WantedBy=timers.target
HARK_BACKUP_TIMER
}

hark_install "$@"
