// Counts heap allocations by interposing the allocation functions.
//
// A definition of `malloc` in the executable takes precedence over the C library's for every
// shared object that calls it through the dynamic linker, the Swift runtime included
// (`swift_allocObject` -> `swift_slowAlloc` -> `malloc`). Each replacement counts, then
// forwards to glibc's own entry points (`__libc_malloc` and friends), which sidesteps the
// classic `dlsym(RTLD_NEXT, "malloc")` bootstrap problem: dlsym itself allocates.
//
// Counting costs one relaxed atomic load per allocation when off, plus one relaxed atomic add
// when on. Elsewhere (macOS, musl) nothing is interposed and the count stays 0; the harness
// detects that with a self-test and reports allocations as unavailable.

#include "MallocCounter.h"

#include <stdatomic.h>

static _Atomic int counting;
static _Atomic uint64_t allocations;

void flux_bench_count_allocations(int enabled) {
  atomic_store_explicit(&counting, enabled != 0, memory_order_seq_cst);
}

uint64_t flux_bench_allocations(void) {
  return atomic_load_explicit(&allocations, memory_order_seq_cst);
}

#if defined(__linux__) && defined(__GLIBC__)

#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static inline void note_allocation(void) {
  if (atomic_load_explicit(&counting, memory_order_relaxed)) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  }
}

void *malloc(size_t size) {
  note_allocation();
  return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
  note_allocation();
  return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
  note_allocation();
  return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
  note_allocation();
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  note_allocation();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
  if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) {
    return EINVAL;
  }
  note_allocation();
  void *pointer = __libc_memalign(alignment, size);
  if (pointer == NULL) {
    return ENOMEM;
  }
  *result = pointer;
  return 0;
}

#endif
