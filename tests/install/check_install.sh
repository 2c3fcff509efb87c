#!/bin/sh
# Installs the build tree into a fresh prefix and uses it as an outside user would:
#   the tree has every part; every installed header compiles with only the prefix's include/;
#   a CMake project (find_package) and a pkg-config build link the library and run, tuning
#   through the installed worker; Python imports the installed package; the installed CLI tunes.
#
#   check_install.sh BUILD_DIR SOURCE_DIR WORK_DIR PYTHON
set -eu
build=$1 src=$2 work=$3 python=$4
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
fail() { echo "check_install: $*" >&2; exit 1; }
unset BEAMLAB_WORKER BEAMLAB_BENCH

cmake --install "$build" --prefix "$prefix" >"$work/install.log" || fail "cmake --install failed (see $work/install.log)"
libdir=$(cd "$prefix" && ls -d lib/cmake/beamlab lib/*/cmake/beamlab 2>/dev/null | head -1 | sed 's|/cmake/beamlab$||')
[ -n "$libdir" ] || fail "no lib*/cmake/beamlab in $prefix"
for f in bin/beamlab libexec/beamlab/beamlab-worker "$libdir/libbeamlab.so" include/beamlab/beamlab.hpp \
         include/beamlab/tuning.hpp "$libdir/cmake/beamlab/beamlabConfig.cmake" \
         "$libdir/cmake/beamlab/beamlabConfigVersion.cmake" "$libdir/pkgconfig/beamlab.pc" \
         lib/python3/dist-packages/beamlab/__init__.py share/man/man1/beamlab.1 \
         share/bash-completion/completions/beamlab share/doc/beamlab/LICENSE; do
  [ -e "$prefix/$f" ] || fail "the install has no $f"
done
ls "$prefix"/lib/python3/dist-packages/beamlab/_beamlab*.so >/dev/null || fail "no Python extension installed"

# Every installed header, alone on the include path.
find "$prefix/include/beamlab" -name '*.hpp' | sort | sed 's|.*/include/|#include <|; s|$|>|' >"$work/all.cpp"
clang++-19 -std=c++20 -fsyntax-only -I"$prefix/include" "$work/all.cpp" || fail "the installed headers do not compile alone"
if grep -rq '#include "' "$prefix/include/beamlab"; then fail "an installed header includes a source path"; fi

# find_package(beamlab)
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -G Ninja -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/consumer.log" || fail "configuring the consumer failed (see $work/consumer.log)"
cmake --build "$work/consumer" >>"$work/consumer.log" || fail "building the consumer failed (see $work/consumer.log)"
"$work/consumer/consumer" || fail "the CMake consumer failed"

# pkg-config
flags=$(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --cflags --libs beamlab) || fail "pkg-config beamlab failed"
# shellcheck disable=SC2086
clang++-19 "$src/tests/install/consumer/main.cpp" $flags -Wl,-rpath,"$prefix/$libdir" -o "$work/pc_consumer" || fail "the pkg-config build failed"
"$work/pc_consumer" || fail "the pkg-config consumer failed"

# Python, from the prefix (not the build tree)
PYTHONPATH="$prefix/lib/python3/dist-packages" "$python" -c "
import beamlab, sys
assert beamlab.__file__.startswith('$prefix'), beamlab.__file__
t = (beamlab.Tensor([[1.0, 2.0], [3.0, 4.0]]) @ beamlab.Tensor.eye(2)).sum()
assert t.item() == 10.0, t.item()
print('python: ok,', beamlab.__file__)
" || fail "importing the installed Python package failed"

# The installed CLI finds its worker in libexec/
"$prefix/bin/beamlab" tune matmul --M 16 --N 16 --K 16 --beam 1 --max-candidates 4 --db "$work/cli.db" --quiet >"$work/cli.log" ||
  fail "the installed beamlab tune failed (see $work/cli.log)"
echo "check_install: ok ($prefix)"
