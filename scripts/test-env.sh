#!/usr/bin/env bash
# Makes this machine ready for the test suite, then exits: the one place that knows what the
# tests need. `npm test` runs it before vitest; .ci/run runs `npm test`.
#
# It installs what is missing with Debian's apt-get (as root) and starts Redis on
# 127.0.0.1:6379 when nothing answers there. Without root, or with TEST_ENV_NO_INSTALL=1, a
# missing piece fails with one line saying what to run. Nothing is downloaded from anywhere but
# Debian's archive.
#
#   redis-server          Redis on 127.0.0.1:6379; Cluster and Sentinel tests start their own
#   slapd, ldap-utils     the LDAP tests start their own slapd in a temp dir
#   samba                 the Active Directory change tests provision their own Samba AD DC in a
#                         temp dir (samba-tool) and run it on 127.0.0.1:389
#   openssl               test CAs and certificates
#   chromium              the status page's browser test (playwright-core drives /usr/bin/chromium)
#   rsyslog, rsyslog-gnutls, rsyslog-relp
#                         the syslog sink against real receivers (imtcp, gtls, imrelp)
#   syslog-ng-core        conflicts with rsyslog as a package: unpacked with dpkg -x into
#                         $SYSLOG_NG_ROOT (default /opt/syslog-ng), its libraries from apt
#   util-linux (script)   pseudo-terminal tests of the CLI
set -uo pipefail
export DEBIAN_FRONTEND=noninteractive
SYSLOG_NG_ROOT="${SYSLOG_NG_ROOT:-/opt/syslog-ng}"
log() { printf '[test-env] %s\n' "$*" >&2; }
fail() { printf '[test-env] %s\n' "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" = 0 ] && [ "${TEST_ENV_NO_INSTALL:-}" != 1 ]; }
apt_updated=0
apt_install() {
  is_root || fail "missing: $*. Run as root: apt-get update && apt-get install -y $*"
  if [ "$apt_updated" = 0 ]; then apt-get update -qq >/dev/null 2>&1 || true; apt_updated=1; fi
  log "installing $*"
  apt-get install -y -qq "$@" >/tmp/test-env-apt.log 2>&1 || fail "apt-get install $* failed (see /tmp/test-env-apt.log)"
}
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }
pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=19)?0:1)' 2>/dev/null ||
  fail "Node >= 22.19 is required (have $(node --version 2>&1)): run npm ci, which installs Node 24 into node_modules/.bin, then npm test"

missing=()
have redis-server || missing+=(redis-server)
have slapd || missing+=(slapd)
have ldapsearch || missing+=(ldap-utils)
have samba-tool && have samba || missing+=(samba)
have openssl || missing+=(openssl)
have chromium || missing+=(chromium)
have script || missing+=(util-linux)
have rsyslogd || missing+=(rsyslog)
pkg_installed rsyslog-gnutls || missing+=(rsyslog-gnutls)
pkg_installed rsyslog-relp || missing+=(rsyslog-relp)
[ "${#missing[@]}" -eq 0 ] || apt_install "${missing[@]}"

# syslog-ng beside rsyslog: its package is unpacked, not installed; its shared libraries are not
# part of it, so they come from apt.
if [ ! -x "$SYSLOG_NG_ROOT/usr/sbin/syslog-ng" ]; then
  is_root || fail "missing: syslog-ng in $SYSLOG_NG_ROOT. Run as root: bash scripts/test-env.sh"
  if [ "$apt_updated" = 0 ]; then apt-get update -qq >/dev/null 2>&1 || true; apt_updated=1; fi
  log "unpacking syslog-ng-core into $SYSLOG_NG_ROOT"
  dl=$(mktemp -d)
  (cd "$dl" && apt-get download syslog-ng-core >/tmp/test-env-apt.log 2>&1) || fail "apt-get download syslog-ng-core failed"
  dpkg -x "$dl"/syslog-ng-core_*.deb "$SYSLOG_NG_ROOT" || fail "dpkg -x syslog-ng-core failed"
  rm -rf "$dl"
fi
sng_libs=$(LD_LIBRARY_PATH="$SYSLOG_NG_ROOT/usr/lib/syslog-ng" ldd "$SYSLOG_NG_ROOT/usr/sbin/syslog-ng" 2>/dev/null | grep -c 'not found')
if [ "$sng_libs" != 0 ]; then
  apt_install libcap2 libglib2.0-0 libivykis0 libjson-c5 libnet1 libpcre3 libssl3 libwrap0
fi

# Redis on 127.0.0.1:6379 (tests use their own key prefixes).
redis_up() { (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; }
if ! redis_up; then
  log "starting redis-server on 127.0.0.1:6379"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no >/dev/null ||
    fail "redis-server did not start; start Redis on 127.0.0.1:6379"
  for _ in $(seq 1 50); do redis_up && break; sleep 0.1; done
  redis_up || fail "Redis does not answer on 127.0.0.1:6379"
fi
exit 0
