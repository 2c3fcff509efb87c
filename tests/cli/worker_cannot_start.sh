#!/bin/sh
# A beamlab-worker that cannot start, as the dynamic loader ends one whose shared library is
# missing (its message on stderr, exit status 127): the tuner must stop at once with it.
echo "beamlab-worker: error while loading shared libraries: libLLVM-19.so.1: cannot open shared object file: No such file or directory" >&2
exit 127
