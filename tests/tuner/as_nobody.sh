#!/bin/sh
# Runs a test binary (beside beamlab-worker) as an unprivileged user: as root, nobody with no
# capabilities (setpriv, from util-linux); otherwise the caller already is one.
#   as_nobody.sh BINARY [ARGS...]
if [ "$(id -u)" -ne 0 ]; then exec "$@"; fi
as_nobody() {
  setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$@"
}
bin=$1
shift
if as_nobody test -x "$bin"; then
  as_nobody "$bin" "$@"
  exit $?
fi
# A build under a directory nobody can't enter (mktemp -d makes them 0700): run copies.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
cp "$bin" "$(dirname "$bin")/beamlab-worker" "$dir/"
cd "$dir" || exit 1
as_nobody "$dir/$(basename "$bin")" "$@"
