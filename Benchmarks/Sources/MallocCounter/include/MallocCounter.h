#ifndef FLUX_BENCH_MALLOC_COUNTER_H
#define FLUX_BENCH_MALLOC_COUNTER_H

#include <stdint.h>

/// Starts (non-zero) or stops (zero) counting heap allocations, process-wide.
void flux_bench_count_allocations(int enabled);

/// The number of heap allocations counted so far (malloc, calloc, realloc and the aligned
/// variants, from every thread).
uint64_t flux_bench_allocations(void);

#endif
