#!/usr/bin/env bash
# The two quick-start commands (see README):
#   bash dev.sh demo   install what is missing, build, run a command in the default sandbox
#   bash dev.sh test   the same set-up, then every test: the default and the asan presets
# Run as root on Debian 12 (it installs packages with apt-get), or as a user
# for whom every package below is already installed.
set -euo pipefail
cd "$(dirname "$0")"

# Everything the build, the tests and the demo use, from Debian's packages.
PACKAGES=(
  cmake g++ make pkg-config git ca-certificates
  libboost1.81-all-dev libseccomp-dev
  bubblewrap
  clang-format
  curl python3 perl tar procps util-linux passwd
)

install_missing() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "dev.sh: missing packages: ${missing[*]} (run as root, or install them)" >&2
    exit 1
  fi
  echo "dev.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() {
  cmake --preset "$1" >/dev/null
  cmake --build --preset "$1"
}

format_check() {
  # Every C and C++ source the project owns follows .clang-format.
  git ls-files -co --exclude-standard '*.cpp' '*.hpp' '*.h' '*.c' |
    xargs clang-format --dry-run --Werror
}

case "${1:-}" in
  demo)
    install_missing
    build default
    ./build/default/bin/ccsandbox probe
    # The default sandbox: this checkout writable, secrets hidden, .env refused.
    ./build/default/bin/ccsandbox run -- sh -c \
      'echo "in the sandbox as $(id -un), pid $$, in $PWD"; ls -A ~/.ssh 2>/dev/null | wc -l;
       echo x > .env || echo "creating .env was refused"; ls /'
    ;;
  test)
    install_missing
    format_check
    for preset in default asan; do
      build "$preset"
      ctest --preset "$preset"
    done
    ;;
  *)
    echo "usage: bash dev.sh demo|test" >&2
    exit 2
    ;;
esac
