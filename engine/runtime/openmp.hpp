// What a process owes libomp beyond launching kernels (launch.hpp).
#pragma once

namespace beamlab {

/// libomp registers every process in /dev/shm (__KMP_REGISTERED_LIB_<pid>_<uid>) and removes
/// the file at a normal exit only, so a process killed, crashed or ended with _exit leaves it
/// behind. Starts OpenMP now and removes the file at once: no end leaves anything. (The file
/// lets libomp refuse a second OpenMP runtime in the same process; beamlab's executables load
/// only this one.) For main() of an executable, before its first parallel region.
void release_openmp_registration();

} // namespace beamlab
