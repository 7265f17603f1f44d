/* hugepage.c: which way the shared heap gets 2 MiB pages, chosen once at MPI_Init, and
 * the calls that get them. What decides (Linux 6.18, checked; docs/design.md):
 *  - a file of a mounted tmpfs follows its mount's huge= option alone; sysfs
 *    shmem_enabled governs only the kernel's internal tmpfs (memfd, SysV, shared
 *    anonymous), except its test values deny and force, which override every mount;
 *  - MADV_COLLAPSE (6.1+) makes a huge page of any 2 MiB range of a tmpfs file whatever
 *    the mount and THP's enabled say (only deny stops it), when at least one page of the
 *    range exists: the holes come back zeroed; an empty range is refused with EINVAL;
 *  - a huge page in the file is mapped by a PMD in every process that maps it
 *    2 MiB-aligned, those already mapping it included (their 4 KiB entries are dropped).
 * No MPI calls, no allocation (the probe maps a scratch file), no locks. */
#include "hugepage.h"
#include "../common/log.h"
#include "../common/stats.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1 */
#endif
#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif
#define TMPFS_MAGIC_ 0x01021994
#define HUGETLBFS_MAGIC_ 0x958458f6

#define PAGE_4K ((size_t)4096)

static _Atomic int method = HMPI_HUGEPAGE_OFF; /* hmpi_hugepage_method_t */

hmpi_hugepage_method_t hmpi_hugepage_method(void)
{
    return (hmpi_hugepage_method_t)atomic_load_explicit(&method, memory_order_relaxed);
}

void hmpi_hugepage_set(hmpi_hugepage_method_t m) { atomic_store(&method, (int)m); }

const char *hmpi_hugepage_name(hmpi_hugepage_method_t m)
{
    switch (m) {
    case HMPI_HUGEPAGE_OFF: return "off";
    case HMPI_HUGEPAGE_FS: return "fs";
    case HMPI_HUGEPAGE_ADVISE: return "advise";
    case HMPI_HUGEPAGE_COLLAPSE: return "collapse";
    }
    return "?";
}

/* ---- what the kernel offers ------------------------------------------------------- */

/* The word in brackets of a sysfs THP setting ("always [never] deny" -> "never"), or ""
 * when it cannot be read. */
static void sysfs_choice(const char *path, char *out, size_t len)
{
    out[0] = '\0';
    char buf[256];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    char *a = strchr(buf, '['), *b = a ? strchr(a, ']') : NULL;
    if (a && b)
        snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
}

/* The huge= option of the tmpfs that holds dir ("never" when the mount has none, as the
 * kernel prints it only when set), from /proc/self/mountinfo by device number. */
static void tmpfs_huge_option(const char *dir, char *out, size_t len)
{
    snprintf(out, len, "never");
    struct stat st;
    if (stat(dir, &st) != 0)
        return;
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (f == NULL)
        return;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        unsigned maj, min;
        /* id parent major:minor root mountpoint options [optional...] - type source super */
        if (sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2 || makedev(maj, min) != st.st_dev)
            continue;
        const char *sep = strstr(line, " - ");
        const char *opt = sep ? strstr(sep, "huge=") : NULL;
        if (opt) {
            opt += 5;
            snprintf(out, len, "%.*s", (int)strcspn(opt, ", \n"), opt);
        }
        break;
    }
    fclose(f);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Makes the page at p exist in the file without changing a byte: a populating write
 * fault, or on kernels before 5.14 an atomic OR of 0 into its first word. 0, or the
 * errno (EFAULT: the file system is full). */
static int populate_page(char *p)
{
    if (madvise(p, PAGE_4K, MADV_POPULATE_WRITE) == 0)
        return 0;
    if (errno != EINVAL)
        return errno;
    __atomic_fetch_or((unsigned long *)(void *)p, 0UL, __ATOMIC_RELAXED);
    return 0;
}

/* One collapse of a fresh 2 MiB scratch file in dir (unnamed, gone when closed): 0 with
 * *ms_p its cost, or the errno that refused it. */
static int probe_collapse(const char *dir, double *ms_p)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno;
    int err = 0;
    char *area = MAP_FAILED;
    if (ftruncate(fd, (off_t)HMPI_HUGEPAGE_SIZE) != 0) {
        err = errno;
        goto out;
    }
    /* A 2 MiB-aligned spot inside a reservation of our own, so MAP_FIXED replaces
     * nothing but that reservation. */
    area = mmap(NULL, 2 * HMPI_HUGEPAGE_SIZE, PROT_NONE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED) {
        err = errno;
        goto out;
    }
    char *at = (char *)(((uintptr_t)area + HMPI_HUGEPAGE_SIZE - 1) & ~(HMPI_HUGEPAGE_SIZE - 1));
    if (mmap(at, HMPI_HUGEPAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
        MAP_FAILED) {
        err = errno;
        goto out;
    }
    double t0 = now_ms();
    err = populate_page(at);
    if (err == 0 && madvise(at, HMPI_HUGEPAGE_SIZE, MADV_COLLAPSE) != 0)
        err = errno;
    *ms_p = now_ms() - t0;
out:
    if (area != MAP_FAILED)
        munmap(area, 2 * HMPI_HUGEPAGE_SIZE);
    close(fd);
    return err;
}

hmpi_hugepage_method_t hmpi_hugepage_detect(const char *dir, char *why, size_t whylen)
{
    struct statfs sf;
    if (statfs(dir, &sf) != 0) {
        snprintf(why, whylen, "%s cannot be examined (%s)", dir, strerror(errno));
        return HMPI_HUGEPAGE_OFF;
    }
    if ((unsigned long)sf.f_type == (unsigned long)HUGETLBFS_MAGIC_) {
        snprintf(why, whylen, "%s is hugetlbfs: every page is huge", dir);
        return HMPI_HUGEPAGE_FS;
    }
    if ((unsigned long)sf.f_type != (unsigned long)TMPFS_MAGIC_) {
        snprintf(why, whylen, "%s is not a tmpfs", dir);
        return HMPI_HUGEPAGE_OFF;
    }
    char shmem[32], huge[32];
    sysfs_choice("/sys/kernel/mm/transparent_hugepage/shmem_enabled", shmem, sizeof shmem);
    tmpfs_huge_option(dir, huge, sizeof huge);
    if (strcmp(shmem, "deny") == 0) {
        snprintf(why, whylen, "shmem_enabled is deny: no huge pages for any tmpfs");
        return HMPI_HUGEPAGE_OFF;
    }
    if (strcmp(shmem, "force") == 0) {
        snprintf(why, whylen, "shmem_enabled is force: every tmpfs page is huge");
        return HMPI_HUGEPAGE_FS;
    }
    if (strcmp(huge, "always") == 0 || strcmp(huge, "within_size") == 0) {
        snprintf(why, whylen, "%s is a tmpfs mounted huge=%s: huge pages at first touch", dir,
                 huge);
        return HMPI_HUGEPAGE_FS;
    }
    if (strcmp(huge, "advise") == 0) {
        snprintf(why, whylen, "%s is a tmpfs mounted huge=advise: MADV_HUGEPAGE on the heap", dir);
        return HMPI_HUGEPAGE_ADVISE;
    }
    double ms = 0;
    int err = probe_collapse(dir, &ms);
    if (err == 0) {
        snprintf(why, whylen,
                 "%s is a tmpfs mounted huge=%s: MADV_COLLAPSE of large blocks; "
                 "a 2 MiB probe took %.2f ms",
                 dir, huge, ms);
        return HMPI_HUGEPAGE_COLLAPSE;
    }
    if (err == ENOMEM || err == EAGAIN || err == EBUSY) {
        /* The kernel can; it had no free huge page or tmpfs room just now. */
        snprintf(why, whylen,
                 "%s is a tmpfs mounted huge=%s: MADV_COLLAPSE of large blocks; "
                 "the probe found no huge page free: %s",
                 dir, huge, strerror(err));
        return HMPI_HUGEPAGE_COLLAPSE;
    }
    snprintf(why, whylen,
             "%s is a tmpfs mounted huge=%s and MADV_COLLAPSE is refused (%s; it "
             "needs Linux 6.1)",
             dir, huge, strerror(err));
    return HMPI_HUGEPAGE_OFF;
}

int hmpi_hugepage_setup(const char *word, const char *dir, char *why, size_t whylen)
{
    static const struct {
        const char *word;
        int forced; /* -1: auto */
    } words[] = {
        {"auto", -1},
        {"off", HMPI_HUGEPAGE_OFF},
        {"advise", HMPI_HUGEPAGE_ADVISE},
        {"collapse", HMPI_HUGEPAGE_COLLAPSE},
    };
    int forced = -2;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(word, words[i].word) == 0)
            forced = words[i].forced;
    if (forced == -2) {
        hmpi_log_error("HMPI_HUGEPAGES='%s' is not valid: expected one of auto, off, advise, "
                       "collapse",
                       word);
        return -1;
    }
    if (forced == HMPI_HUGEPAGE_OFF) {
        snprintf(why, whylen, "HMPI_HUGEPAGES=off");
        atomic_store(&method, HMPI_HUGEPAGE_OFF);
        return 0;
    }
    char found[384];
    hmpi_hugepage_method_t offered = hmpi_hugepage_detect(dir, found, sizeof found);
    hmpi_hugepage_method_t m = forced < 0 ? offered : (hmpi_hugepage_method_t)forced;
    atomic_store(&method, m);
    if (forced >= 0 && offered != m) { /* done anyway, since the user asked */
        snprintf(why, whylen, "HMPI_HUGEPAGES=%s, forced although %s", word, found);
        return 1;
    }
    snprintf(why, whylen, "%s", found);
    return 0;
}

/* ---- applying it ------------------------------------------------------------------- */

int hmpi_hugepage_region(void *p, size_t len)
{
    if (hmpi_hugepage_method() != HMPI_HUGEPAGE_ADVISE)
        return 0;
    if (madvise(p, len, MADV_HUGEPAGE) == 0)
        return 0;
    hmpi_log_info("MADV_HUGEPAGE on the shared region refused (%s): no huge pages from HMPI",
                  strerror(errno));
    atomic_store(&method, HMPI_HUGEPAGE_OFF);
    return -1;
}

size_t hmpi_hugepage_back(void *p, size_t len)
{
    if (hmpi_hugepage_method() != HMPI_HUGEPAGE_COLLAPSE)
        return 0;
    const uintptr_t mask = HMPI_HUGEPAGE_SIZE - 1;
    uintptr_t lo = ((uintptr_t)p + mask) & ~mask;
    uintptr_t hi = ((uintptr_t)p + len) & ~mask;
    if (len < HMPI_HUGEPAGE_SIZE || (uintptr_t)p + len < (uintptr_t)p || hi <= lo)
        return 0;
    size_t done = 0, refused = 0;
    for (uintptr_t a = lo; a < hi; a += HMPI_HUGEPAGE_SIZE) {
        /* An empty range is refused: make its first page exist, unchanged. */
        if (populate_page((char *)a) != 0) {
            refused += (hi - a) / HMPI_HUGEPAGE_SIZE; /* the file system is full */
            break;
        }
        if (madvise((void *)a, HMPI_HUGEPAGE_SIZE, MADV_COLLAPSE) == 0) {
            done += HMPI_HUGEPAGE_SIZE;
            continue;
        }
        int err = errno;
        refused++;
        if (err == EINVAL) { /* refused as such (deny set since, not a tmpfs): for good */
            atomic_store(&method, HMPI_HUGEPAGE_OFF);
            refused += (hi - a) / HMPI_HUGEPAGE_SIZE - 1;
            break;
        }
        if (err == ENOMEM) { /* no huge page or no room now: the next ones would wait too */
            refused += (hi - a) / HMPI_HUGEPAGE_SIZE - 1;
            break;
        }
        /* EAGAIN and the like: that range was busy; the next may do */
    }
    hmpi_stat_add(HMPI_STAT_heap_huge_bytes, done);
    hmpi_stat_add(HMPI_STAT_heap_huge_refused, refused);
    return done;
}
