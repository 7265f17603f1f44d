/* region.c: the shared region's file and its mapping at one address.
 * The file lives on a tmpfs (HMPI_SHM_DIR), is created O_EXCL with mode 0600 under a
 * name drawn from the kernel's random source, and is unlinked by the node part as
 * soon as every local rank has mapped it. A SIGBUS from a full file system under the
 * mapping becomes a message naming it (the node part supplies the abort). No MPI calls
 * in here. */
#include "heap.h"
#include "../common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
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

int hmpi_region_name(const char *dir, const unsigned char *rnd, size_t nrnd, char *path,
                     size_t pathlen)
{
    int n = snprintf(path, pathlen, "%s/hmpi-", dir);
    for (size_t i = 0; i < nrnd && n > 0 && (size_t)n + 2 < pathlen; i++)
        n += snprintf(path + n, pathlen - (size_t)n, "%02x", rnd[i]);
    return n > 0 && (size_t)n == strlen(dir) + 6 + 2 * nrnd ? 0 : -1;
}

int hmpi_region_create_at(const char *path, size_t len, int *fd_p)
{
    /* O_EXCL with O_NOFOLLOW: a file or a symlink already at the name (planted by
     * someone guessing it) makes this fail instead of opening or following it. */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        hmpi_log_error("cannot create the shared region '%s': %s", path, strerror(errno));
        return -1;
    }
    /* fchmod: the umask may only remove bits, yet make it exactly 0600 whatever it is. */
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

int hmpi_region_create(const char *dir, size_t len, char *path, size_t pathlen, int *fd_p)
{
    unsigned char rnd[12]; /* 96 bits from the kernel: not guessable, not repeated */
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        hmpi_log_error("cannot draw a random region name: %s", strerror(errno));
        return -1;
    }
    if (hmpi_region_name(dir, rnd, sizeof rnd, path, pathlen) != 0) {
        hmpi_log_error("region path under '%s' is too long", dir);
        return -1;
    }
    return hmpi_region_create_at(path, len, fd_p);
}

int hmpi_region_open(const char *path, int *fd_p)
{
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        /* The file stays until every local rank has opened it: missing, it was made in
         * another directory of the same name (a container per rank). */
        int missing = errno == ENOENT;
        hmpi_log_error("cannot open the shared region '%s': %s%s", path, strerror(errno),
                       missing ? " (the ranks of this machine do not share that directory: a "
                                 "container per rank, each with its own /dev/shm? "
                                 "docs/launchers.md, \"Containers\")"
                               : "");
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0 ||
        !S_ISREG(st.st_mode)) {
        hmpi_log_error("refusing the shared region '%s': not a private file of this user", path);
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

/* ---- a file system that fills up under the region ------------------------------------ */

/* The file is sparse and mapped MAP_NORESERVE: a page gets its memory in the tmpfs when
 * first touched, and the kernel answers a touch it cannot back with SIGBUS. mimalloc
 * 2.0.9 hands arena memory out as already committed, with no callback when a segment
 * is claimed, so HMPI cannot reserve (fallocate) exactly the pages mimalloc is about to
 * touch; reserving ahead would take real memory from the tmpfs for every rank. So the
 * fault is caught instead: a SIGBUS inside the region becomes a message naming the file
 * system and an abort of the whole job (docs/limitations.md). */

static char fault_dir[256];
static void (*fault_abort)(void);
static struct sigaction fault_prev;
static volatile sig_atomic_t fault_aborting;

/* Appends s to buf (at *n, capacity cap): signal-safe, no stdio. */
static void put_str(char *buf, size_t *n, size_t cap, const char *s)
{
    while (*s && *n + 1 < cap)
        buf[(*n)++] = *s++;
}

static void put_num(char *buf, size_t *n, size_t cap, unsigned long long v, unsigned base)
{
    char tmp[24];
    int k = 0;
    do {
        tmp[k++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v && k < (int)sizeof tmp);
    while (k > 0 && *n + 1 < cap)
        buf[(*n)++] = tmp[--k];
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    size_t len = hmpi_region.ctrl_size + hmpi_region.slices_len;
    if (si->si_code == BUS_ADRERR && hmpi_region.base != 0 && a - hmpi_region.base < len) {
        /* The abort below allocates: from private memory, not from new pages of the
         * full region. Should it touch one anyway, that second fault comes back here
         * (SA_NODEFER) and ends the process at once, rather than as a bare SIGBUS. */
        if (fault_aborting)
            _exit(1);
        fault_aborting = 1;
        hmpi_heap_go_private();
        char m[768];
        size_t n = 0;
        put_str(m, &n, sizeof m, "hmpi"); /* log.c's prefix, without its stdio */
        if (hmpi_log_rank >= 0) {
            put_str(m, &n, sizeof m, "[");
            put_num(m, &n, sizeof m, (unsigned long long)hmpi_log_rank, 10);
            put_str(m, &n, sizeof m, "]");
        }
        put_str(m, &n, sizeof m, ": error: the shared region's file system (");
        put_str(m, &n, sizeof m, fault_dir);
        put_str(m, &n, sizeof m, ") is full: no memory for the page at 0x");
        put_num(m, &n, sizeof m, a, 16);
        put_str(m, &n, sizeof m,
                " of the shared heap (SIGBUS). Stopping the job: give that "
                "file system more room (docker --shm-size, a larger tmpfs "
                "as HMPI_SHM_DIR) or allocate less after MPI_Init "
                "(docs/limitations.md)\n");
        ssize_t w = write(STDERR_FILENO, m, n);
        (void)w;
        /* The launcher forwards our stderr: give it a moment to pass the line on before
         * the abort tears the job down (hydra has been seen to drop it otherwise). */
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
        /* Aborting from a signal handler may block on a lock the faulting thread holds:
         * the alarm's default action then ends this rank, and the launcher the job. */
        alarm(10);
        if (fault_abort)
            fault_abort();
        _exit(1);
    }
    /* Not a page of the region: to the handler that was there, or the default. */
    if ((fault_prev.sa_flags & SA_SIGINFO) && fault_prev.sa_sigaction != NULL) {
        fault_prev.sa_sigaction(sig, si, uc);
    } else if (fault_prev.sa_handler != SIG_DFL && fault_prev.sa_handler != SIG_IGN) {
        fault_prev.sa_handler(sig);
    } else {
        signal(SIGBUS, SIG_DFL); /* the access runs again and takes the default action */
    }
}

void hmpi_region_watch_faults(const char *dir, void (*abort_job)(void))
{
    snprintf(fault_dir, sizeof fault_dir, "%s", dir);
    fault_abort = abort_job;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &fault_prev);
}
