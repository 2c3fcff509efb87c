#!/bin/sh
# scripts/bundle's tarball, as a machine without Debian's packages would use it: nothing but
# glibc is loaded from outside it, and moved to another folder, with an empty environment, a
# tuning run starts its sandboxed workers and tunes, and `run --cache off` needs no database
# (nor HOME to find one).
#   check_bundle.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
if ! command -v patchelf >/dev/null && [ "$(id -u)" != 0 ]; then
  echo "SKIP: patchelf is not installed (scripts/test installs it)"
  exit 77
fi
BEAMLAB_BUILD="$build" bash "$src/scripts/bundle" "$work/beamlab.tar.xz"
tar -C "$work" -xJf "$work/beamlab.tar.xz"
mv "$work/beamlab-linux-x86_64" "$work/moved"
b="$work/moved"
outside=$(ldd "$b/bin/beamlab" "$b/bin/beamlab-worker" |
  awk -v b="$b" '$2 == "=>" && index($3, b) != 1 {print $1}' |
  grep -Ev '^(libc|libm|libdl|libpthread|librt)\.so' || true)
if [ -n "$outside" ]; then
  echo "loaded from outside the bundle: $outside"
  exit 1
fi
env -i "$b/bin/beamlab" tune "$src/tests/corpora/tiny.json" --beam 1 --max-candidates 8 \
  --db "$work/t.db" --quiet
env -i "$b/bin/beamlab" run matmul --M 32 --N 32 --K 32 --runs 2 --cache off --format json |
  grep -q '"db": null' || { echo "run --cache off with an empty environment failed"; exit 1; }
echo "bundle: $(du -h "$work/beamlab.tar.xz" | cut -f1), relocated and tuned"
