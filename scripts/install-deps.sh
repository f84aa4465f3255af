#!/usr/bin/env bash
# Installs the Debian 12 packages Lavik's build, tests and benchmarks need, if missing.
# Run as root (CI and `make run`/`make test` call it); a no-op when everything is present.
set -euo pipefail
PKGS=(build-essential cmake pkg-config liburing-dev libgtest-dev libgmock-dev googletest
      libbenchmark-dev clang-format libxxhash-dev libisal-dev liblzf-dev libssl-dev liblua5.1-0-dev lua-cjson-dev lua-bitop-dev openssl redis-server redis-sentinel redis-tools iproute2 python3 python3-redis python3-pytest nodejs)
# npm comes with some nodejs builds (NodeSource bundles it, and Debian's npm package conflicts
# with those): the Debian package only when there is no npm command.
command -v npm >/dev/null 2>&1 || PKGS+=(npm)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]} (run as root or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
