// libomp's registration file; see openmp.hpp.
#include "engine/runtime/openmp.hpp"

#include <omp.h>
#include <string>
#include <unistd.h>

namespace beamlab {

void release_openmp_registration() {
  (void)omp_get_num_procs(); // libomp's serial initialization, which registers the process
  std::string path = "/dev/shm/__KMP_REGISTERED_LIB_" + std::to_string(::getpid()) + "_" +
                     std::to_string(::getuid());
  ::unlink(path.c_str());
}

} // namespace beamlab
