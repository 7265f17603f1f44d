/* test_util.h: helpers shared by the unit tests of the heap: a byte pattern that
 * differs per block and per offset, and a region fixture (a private temp dir on
 * /dev/shm, the region file in it, mapped at a random address). No MPI in here. */
#ifndef HMPI_TEST_UTIL_H
#define HMPI_TEST_UTIL_H

#include "../check.h"
#include "heap/heap.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The pattern, 8 bytes at a time: word k of a block stamped with seed. Differs
 * between seeds and between words, so a byte moved or lost shows. */
static inline uint64_t pat_word(uint32_t seed, size_t k)
{
    uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)seed + 1) * 0xC2B2AE3D27D4EB4FULL;
    return x ^ x >> 29;
}

/* Byte i of the pattern (little-endian order of its word). */
static inline uint8_t pat_byte(uint32_t seed, size_t i)
{
    return (uint8_t)(pat_word(seed, i >> 3) >> ((i & 7) * 8));
}

/* Writes bytes [from, to) of the pattern into the block at p (the same bytes whatever
 * part is written, so a grown block can be completed). */
static inline void pat_fill_range(void *p, size_t from, size_t to, uint32_t seed)
{
    uint8_t *b = (uint8_t *)p;
    size_t i = from;
    for (; i < to && (i & 7) != 0; i++)
        b[i] = pat_byte(seed, i);
    for (; i + 8 <= to; i += 8) {
        uint64_t w = pat_word(seed, i >> 3);
        memcpy(b + i, &w, 8);
    }
    for (; i < to; i++)
        b[i] = pat_byte(seed, i);
}

static inline void pat_fill(void *p, size_t n, uint32_t seed) { pat_fill_range(p, 0, n, seed); }

/* Index of the first byte that differs from the pattern, or (size_t)-1. */
static inline size_t pat_check(const void *p, size_t n, uint32_t seed)
{
    const uint8_t *b = (const uint8_t *)p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        if (w != pat_word(seed, i >> 3))
            break;
    }
    for (; i < n; i++)
        if (b[i] != pat_byte(seed, i))
            return i;
    return (size_t)-1;
}

/* Index of the first non-zero byte, or (size_t)-1. */
static inline size_t zero_check(const void *p, size_t n)
{
    const uint8_t *b = (const uint8_t *)p;
    size_t i = 0;
    for (; i < n && ((uintptr_t)(b + i) & 7) != 0; i++)
        if (b[i])
            return i;
    for (; i + 8 <= n; i += 8)
        if (*(const uint64_t *)(const void *)(b + i) != 0)
            break;
    for (; i < n; i++)
        if (b[i])
            return i;
    return (size_t)-1;
}

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Files in dir, not counting . and .. (-1 when it cannot be read). */
static inline int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

typedef struct {
    char dir[128];  /* private temp dir on /dev/shm */
    char path[256]; /* the region file in it */
    int fd;
    size_t len;     /* whole region */
    unsigned shift; /* log2 of one slice */
    uintptr_t base; /* where it is mapped */
} region_fixture_t;

/* A test that fails before fixture_unlink leaves no file or dir behind either. */
static region_fixture_t *fixture_live;
static inline void fixture_atexit(void)
{
    if (fixture_live != NULL && fixture_live->dir[0] != '\0') {
        if (fixture_live->path[0] != '\0')
            unlink(fixture_live->path);
        rmdir(fixture_live->dir);
    }
}

/* Makes a temp dir, the region file for nslices slices of slice_min bytes, and maps
 * it at a free random address. The file is left in place (see fixture_unlink). */
static inline void fixture_make(region_fixture_t *f, int nslices, size_t slice_min)
{
    memset(f, 0, sizeof *f);
    fixture_live = f;
    atexit(fixture_atexit);
    snprintf(f->dir, sizeof f->dir, "/dev/shm/hmpitest.XXXXXX");
    CHECK(mkdtemp(f->dir) != NULL, "mkdtemp: %s", strerror(errno));
    f->len = hmpi_region_size(nslices, slice_min, &f->shift);
    CHECK(f->len == HMPI_REGION_ALIGN + ((size_t)nslices << f->shift),
          "region size %zu for %d slices of 2^%u", f->len, nslices, f->shift);
    CHECK(hmpi_region_create(f->dir, f->len, f->path, sizeof f->path, &f->fd) == 0,
          "hmpi_region_create in %s failed", f->dir);
    int err = EEXIST;
    for (int attempt = 0; attempt < 32 && err != 0; attempt++) {
        f->base = hmpi_region_pick_addr(f->len);
        CHECK(f->base % HMPI_REGION_ALIGN == 0, "picked address %#lx is not aligned",
              (unsigned long)f->base);
        err = hmpi_region_map(f->fd, f->base, f->len);
        CHECK(err == 0 || err == EEXIST, "hmpi_region_map: %s", strerror(err));
    }
    CHECK(err == 0, "no free address for the region after 32 tries");
}

/* Unlinks the region file and removes the temp dir, checking nothing else was left. */
static inline void fixture_unlink(region_fixture_t *f)
{
    CHECK(unlink(f->path) == 0, "unlink %s: %s", f->path, strerror(errno));
    struct stat st;
    CHECK(stat(f->path, &st) != 0 && errno == ENOENT, "%s still exists after unlink", f->path);
    CHECK(dir_entries(f->dir) == 0, "%s is not empty after unlinking the region", f->dir);
    CHECK(rmdir(f->dir) == 0, "rmdir %s: %s", f->dir, strerror(errno));
    fixture_live = NULL;
}

#endif
