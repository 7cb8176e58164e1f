// The OpenMP thread's index inside a parallel region (0 outside one, or in a build
// without OpenMP), to pick its slice of scratch allocated before the region.
#pragma once

#ifdef _OPENMP
#include <omp.h>
#endif

namespace edgegan::cpu {

inline int thread_index() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

}  // namespace edgegan::cpu
