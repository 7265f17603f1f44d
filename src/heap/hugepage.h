/* hugepage.h: huge pages for the shared heap. The region is a tmpfs file mapped
 * MAP_SHARED, which the kernel backs with 4 KiB pages whatever THP's `enabled` says,
 * unless its mount says huge= (or shmem_enabled says force). This part picks, at
 * MPI_Init, how HMPI gets 2 MiB pages anyway (HMPI_HUGEPAGES), applies it to the whole
 * mapping at attach and to each large block's 2 MiB-aligned ranges when the allocator
 * asks. A refused huge page is a slower page, never an error. No MPI calls, no
 * allocation, no locks in here. docs/design.md ("Huge pages") has the measurements. */
#ifndef HMPI_HEAP_HUGEPAGE_H
#define HMPI_HEAP_HUGEPAGE_H

#include <stddef.h>

#define HMPI_HUGEPAGE_SIZE ((size_t)2 << 20) /* a PMD page on x86-64 and arm64 (4 KiB base) */

typedef enum {
    HMPI_HUGEPAGE_OFF,      /* HMPI does nothing: the file system's own policy holds */
    HMPI_HUGEPAGE_FS,       /* the file system gives huge pages at fault by itself: a tmpfs
                             * mounted huge=always or within_size, shmem_enabled=force, or
                             * hugetlbfs. Nothing to do. */
    HMPI_HUGEPAGE_ADVISE,   /* a tmpfs mounted huge=advise: MADV_HUGEPAGE on the mapping,
                             * then every first touch of a 2 MiB range gets a huge page */
    HMPI_HUGEPAGE_COLLAPSE, /* any tmpfs, Linux 6.1+, shmem_enabled not deny: MADV_COLLAPSE
                             * of each 2 MiB range of a large block, which allocates one
                             * zeroed huge page (contents kept) */
} hmpi_hugepage_method_t;

/* The method for a region whose file lives in dir, as HMPI_HUGEPAGES=word asks ("auto"
 * picks the best the kernel offers; "off", "advise", "collapse" force one). Sets this
 * process's method and writes into why (whylen bytes) one sentence on what was found,
 * for HMPI_VERBOSE. Returns 0; 1 when a forced method is not what the kernel offers (it
 * is used anyway: the caller should say why); -1 (logged) for a word that is none of
 * those. Call it before the allocator backs any block (MPI_Init). */
int hmpi_hugepage_setup(const char *word, const char *dir, char *why, size_t whylen);

/* Takes the method another process of the node chose with hmpi_hugepage_setup (one
 * kernel, one file system: the same answer, found once). */
void hmpi_hugepage_set(hmpi_hugepage_method_t m);

/* What the kernel offers for a file in dir, without choosing: FS, ADVISE, COLLAPSE
 * (tried once on a 2 MiB scratch file in dir, gone afterwards) or OFF; why as above. */
hmpi_hugepage_method_t hmpi_hugepage_detect(const char *dir, char *why, size_t whylen);

/* This process's method (OFF before hmpi_hugepage_setup, and after the kernel refused
 * a collapse with EINVAL: it will refuse the next one too). */
hmpi_hugepage_method_t hmpi_hugepage_method(void);

/* "off", "fs", "advise", "collapse". */
const char *hmpi_hugepage_name(hmpi_hugepage_method_t m);

/* At attach, once the region is mapped in this process, for its slices [p, p+len): the
 * region-wide part of the method (ADVISE: MADV_HUGEPAGE over them). Returns 0, or -1 when
 * the kernel refused the advice (said on stderr; the method is then off). */
int hmpi_hugepage_region(void *p, size_t len);

/* For a large block [p, p+len) of the shared heap: backs every whole, 2 MiB-aligned
 * 2 MiB range inside it with a huge page where the method does this per range
 * (COLLAPSE); the rest of the block, and every block under the other methods, is left
 * alone. Fresh ranges (never touched: the file has no page there) and touched ones both
 * work, and their contents are kept byte for byte, also as other processes see them.
 * Under COLLAPSE the whole range becomes resident (2 MiB of the file system per range)
 * and costs what a first touch of it would, in this call (docs/design.md). Returns the
 * bytes now backed by huge pages by this call (0 when nothing applies or every range
 * was refused: those stay 4 KiB pages). Thread-safe. */
size_t hmpi_hugepage_back(void *p, size_t len);

#endif
