/* region.c: the shared region's file and its mapping at one address.
 * The file lives on a tmpfs (HMPI_SHM_DIR), is created O_EXCL with mode 0600 under a
 * name drawn from the kernel's random source, and is unlinked by the node part as
 * soon as every local rank has mapped it. No MPI calls in here. */
#include "heap.h"
#include "../common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

size_t hmpi_region_size(int nslices, size_t slice_min, unsigned *shift_p)
{
    unsigned shift = 30;
    while (((size_t)1 << shift) < slice_min)
        shift++;
    *shift_p = shift;
    return HMPI_REGION_ALIGN + ((size_t)nslices << shift);
}

int hmpi_region_create(const char *dir, size_t len, char *path, size_t pathlen, int *fd_p)
{
    unsigned char rnd[12];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        hmpi_log_error("cannot draw a random region name: %s", strerror(errno));
        return -1;
    }
    int n = snprintf(path, pathlen, "%s/hmpi-", dir);
    for (size_t i = 0; i < sizeof rnd && n > 0 && (size_t)n + 3 < pathlen; i++)
        n += snprintf(path + n, pathlen - (size_t)n, "%02x", rnd[i]);
    if (n < 0 || (size_t)n + 1 >= pathlen) {
        hmpi_log_error("region path under '%s' is too long", dir);
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        hmpi_log_error("cannot create the shared region '%s': %s", path, strerror(errno));
        return -1;
    }
    if (fchmod(fd, 0600) != 0 || ftruncate(fd, (off_t)len) != 0) {
        hmpi_log_error("cannot size the shared region '%s' to %zu bytes: %s", path, len,
                       strerror(errno));
        close(fd);
        unlink(path);
        return -1;
    }
    *fd_p = fd;
    return 0;
}

int hmpi_region_open(const char *path, int *fd_p)
{
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        hmpi_log_error("cannot open the shared region '%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0 ||
        !S_ISREG(st.st_mode)) {
        hmpi_log_error("refusing the shared region '%s': not a private file of this user",
                       path);
        close(fd);
        return -1;
    }
    *fd_p = fd;
    return 0;
}

int hmpi_region_map(int fd, uintptr_t addr, size_t len)
{
    void *p = mmap((void *)addr, len, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE, fd, 0);
    if (p == MAP_FAILED)
        return errno ? errno : EINVAL;
    if ((uintptr_t)p != addr) { /* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
        munmap(p, len);
        return EEXIST;
    }
    return 0;
}

uintptr_t hmpi_region_pick_addr(size_t len)
{
    /* Between 16 TiB and 96 TiB: above the program and its brk heap, below the
     * shared libraries and stacks that the kernel places near 128 TiB. */
#if defined(__SANITIZE_THREAD__)
    /* ThreadSanitizer keeps its shadow memory there; of its application ranges, the
     * 8 TiB below the libraries and stacks is free. */
    const uintptr_t lo = (uintptr_t)0x7E8 << 36, hi = (uintptr_t)0x7F0 << 36;
#else
    const uintptr_t lo = (uintptr_t)16 << 40, hi = (uintptr_t)96 << 40;
#endif
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
        r = (uint64_t)getpid() * 0x9E3779B97F4A7C15ULL;
    if (len >= hi - lo)
        return lo;
    uintptr_t slots = (hi - lo - len) / HMPI_REGION_ALIGN;
    return lo + (uintptr_t)(r % (slots + 1)) * HMPI_REGION_ALIGN;
}

unsigned long long hmpi_region_space(const char *dir)
{
    struct statvfs sv;
    if (statvfs(dir, &sv) != 0)
        return 0;
    return (unsigned long long)sv.f_bavail * sv.f_frsize;
}
