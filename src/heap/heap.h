/* heap.h: the shared heap. One region per node, mapped at the same address in every
 * local rank: [control area][slice 0][slice 1]... Each rank allocates only from its
 * own slice, through a mimalloc arena. No MPI in here (the node part agrees on the
 * address and calls these functions). */
#ifndef HMPI_HEAP_H
#define HMPI_HEAP_H

#include <stddef.h>
#include <stdint.h>

/* Geometry of the mapped region. All zero when there is none; written once before
 * the heap is switched on and never again (read without locks afterwards). */
typedef struct {
    uintptr_t base;       /* start of the region, same in every local rank */
    size_t ctrl_size;     /* control area at base: queues, flags (see shm/) */
    uintptr_t slices;     /* base + ctrl_size: slice 0 */
    size_t slices_len;    /* nslices << slice_shift */
    unsigned slice_shift; /* log2 of one slice */
    int nslices;          /* local ranks */
    int my_slice;         /* this rank's slice, -1 without region */
    int fd;               /* kept open so a fork()ed child can remap it privately */
} hmpi_region_t;

extern hmpi_region_t hmpi_region;

#define HMPI_REGION_ALIGN ((size_t)1 << 30) /* base, control area and slices: 1 GiB */

/* True when [p] lies in some rank's slice of the shared heap: two instructions. */
static inline int hmpi_heap_is_shared(const void *p)
{
    return (uintptr_t)p - hmpi_region.slices < hmpi_region.slices_len;
}

/* True when the whole of [p, p+len) lies in the shared heap. */
static inline int hmpi_heap_is_shared_range(const void *p, size_t len)
{
    uintptr_t off = (uintptr_t)p - hmpi_region.slices;
    return off < hmpi_region.slices_len && len <= hmpi_region.slices_len - off;
}

/* The local rank whose slice holds p, or -1 when p is not in the shared heap. */
static inline int hmpi_heap_owner(const void *p)
{
    uintptr_t off = (uintptr_t)p - hmpi_region.slices;
    return off < hmpi_region.slices_len ? (int)(off >> hmpi_region.slice_shift) : -1;
}

/* Bytes one region needs for nslices slices of at least slice_min bytes each;
 * *shift_p gets log2 of the slice size (a power of two, at least 1 GiB). */
size_t hmpi_region_size(int nslices, size_t slice_min, unsigned *shift_p);

/* Creates the region's file in dir: a random name from the kernel, O_EXCL, mode
 * 0600, sized len (sparse). Fills path (pathlen bytes) and *fd_p. Logs and returns
 * -1 on failure, leaving no file behind. */
int hmpi_region_create(const char *dir, size_t len, char *path, size_t pathlen, int *fd_p);

/* The two steps of hmpi_region_create, apart for the unit tests: the name
 * "<dir>/hmpi-<hex of rnd>" (0, or -1 when it does not fit in pathlen), and the file at
 * path (O_CREAT|O_EXCL|O_NOFOLLOW: refuses any file or symlink already there; mode
 * exactly 0600; logs and returns -1 on failure, leaving nothing behind). */
int hmpi_region_name(const char *dir, const unsigned char *rnd, size_t nrnd, char *path,
                     size_t pathlen);
int hmpi_region_create_at(const char *path, size_t len, int *fd_p);

/* Opens a region file made by a local peer; refuses one not owned by this user or
 * readable by others. Logs and returns -1 on failure. */
int hmpi_region_open(const char *path, int *fd_p);

/* Maps fd at exactly addr (never replacing an existing mapping). Returns 0, or the
 * positive errno when the address is taken or the map fails (not logged: the caller
 * retries elsewhere). */
int hmpi_region_map(int fd, uintptr_t addr, size_t len);

/* A random, aligned address with room for len bytes, far from the usual mappings. */
uintptr_t hmpi_region_pick_addr(size_t len);

/* Free bytes on the file system of dir, or 0 when it cannot be asked. */
unsigned long long hmpi_region_space(const char *dir);

/* Once the region is attached: a SIGBUS on one of its pages (the file system under it,
 * dir, could not supply the page: it is full) prints a message naming dir and calls
 * abort_job, which should end the whole job; the process exits if it returns. Any
 * other SIGBUS goes to the handler installed before. */
void hmpi_region_watch_faults(const char *dir, void (*abort_job)(void));

/* Hands this rank's slice of an already mapped region to the allocator and switches
 * malloc over to it: the lower half to mimalloc's arenas, the upper half to the big blocks
 * (HMPI_HEAP_BIG_MIN and more, big.h). From then on every thread allocates from the shared heap.
 * Returns 0 or -1 (logged). */
int hmpi_heap_attach(uintptr_t base, size_t ctrl_size, unsigned slice_shift, int nslices,
                     int my_slice, int fd);

/* Explicit allocation from this rank's shared slice (private memory when the shared
 * heap is off or full): what malloc and friends call, for parts that need heap memory
 * whatever allocator the program links first. Free with hmpi_heap_free. */
void *hmpi_heap_malloc(size_t n);
void *hmpi_heap_calloc(size_t count, size_t size);
void *hmpi_heap_realloc(void *p, size_t n);
void *hmpi_heap_aligned(size_t align, size_t n);
void hmpi_heap_free(void *p);
/* The bytes usable in a block of the functions above (malloc_usable_size). */
size_t hmpi_heap_usable_size(const void *p);

/* Memory that must be in the shared heap (for a peer to read): NULL when the heap is
 * off or full, never private memory. 64-byte aligned. */
void *hmpi_heap_shared_alloc(size_t n);

/* From now on every allocation of this process is private (the region's file system is
 * full and the process is on its way out). Signal-safe: one atomic store. */
void hmpi_heap_go_private(void);

/* From now on, shared blocks of n bytes and more are big blocks (2 MiB-aligned extents
 * of the slice's upper half, which the huge-page method backs; heap/big.h). Only lowers
 * the threshold (HMPI_HEAP_BIG_MIN by default). */
void hmpi_heap_big_from(size_t n);

/* 1 once hmpi_heap_attach succeeded in this process. */
int hmpi_heap_active(void);

#endif
