#!/bin/sh
# Runs a command as an unprivileged user: as root, nobody with no capabilities (setpriv, from
# util-linux); otherwise the caller already is one.
if [ "$(id -u)" -ne 0 ]; then exec "$@"; fi
exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$@"
