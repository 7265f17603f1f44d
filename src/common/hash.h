/* hash.h: the bucket of a handle of the MPI below (an int in MPICH, a pointer in Open
 * MPI) in a table of 2^bits buckets: its bits folded (a pointer's low ones are the
 * allocator's alignment) and multiplied by 2^64 / the golden ratio, whose top bits spread
 * consecutive handles over the table (Fibonacci hashing). The communicator table
 * (core/comm.h) and the window table (rma/rma.h) look up by it on their hot paths. */
#ifndef HMPI_COMMON_HASH_H
#define HMPI_COMMON_HASH_H

#include <stdint.h>

static inline unsigned hmpi_hash_handle(uintptr_t v, unsigned bits)
{
    uint64_t x = v ^ (v >> 17);
    return (unsigned)((x * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
}

#endif
