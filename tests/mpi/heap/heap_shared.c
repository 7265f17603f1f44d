/* heap_shared.c: a buffer malloc'ed by a rank after MPI_Init is readable, and
 * writable, by every rank of its node at the same address; HMPI_Is_shared and
 * HMPI_Owner say so; the region's file is already unlinked (mode 0600) while the job
 * runs. Memory from before MPI_Init stays private. Messages between all ranks carry
 * the same buffers correctly, whether HMPI is active or passes through.
 *   --expect=on    HMPI is active (default)
 *   --expect=off   HMPI passes through (HMPI_DISABLE=1, or no region could be made)
 *   --kill-rank=r  rank r SIGKILLs itself after MPI_Init, the others wait in a barrier
 * Built once linked with libhmpi, once PLAIN (no HMPI at link time: it finds the
 * HMPI_* functions with dlsym, run under hmpirun). Same node: world_rank/HMPI_NODE_SIZE
 * when that is set and nonzero, else every rank (one machine). */
#define CHECK_WITH_MPI
#include "../../check.h"

#include <dirent.h>
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HMPI_TEST_PLAIN
static int (*hmpi_active)(void);
static int (*hmpi_is_shared)(const void *);
static int (*hmpi_owner)(const void *);

static void find_hmpi(void)
{
    /* What a program that knows nothing of HMPI can see under hmpirun. */
    hmpi_active = (int (*)(void))dlsym(RTLD_DEFAULT, "HMPI_Active");
    hmpi_is_shared = (int (*)(const void *))dlsym(RTLD_DEFAULT, "HMPI_Is_shared");
    hmpi_owner = (int (*)(const void *))dlsym(RTLD_DEFAULT, "HMPI_Owner");
    CHECK(hmpi_active && hmpi_is_shared && hmpi_owner,
          "HMPI_* not found in the process: is libhmpi preloaded (hmpirun)?");
}
#else
#include "hmpi.h"
#define hmpi_active HMPI_Active
#define hmpi_is_shared HMPI_Is_shared
#define hmpi_owner HMPI_Owner
static void find_hmpi(void) {}
#endif

/* Under AddressSanitizer HMPI does not replace malloc (HMPI_NO_MALLOC_INTERPOSE):
 * the region is made, yet malloc'ed buffers stay private. */
#ifdef HMPI_TEST_NO_INTERPOSE
enum { MALLOC_SHARED = 0 };
#else
enum { MALLOC_SHARED = 1 };
#endif

enum { NB = 3, STAMP = 64 };

static int rank, size, node_size;

static int node_of(int r) { return node_size > 0 ? r / node_size : 0; }
static int local_of(int r) { return node_size > 0 ? r % node_size : r; }
static int same_node(int r) { return node_of(r) == node_of(rank); }

static size_t len_of(int r, int b)
{
    static const size_t base[NB] = {100, 65536, (size_t)3 << 20};
    static const size_t step[NB] = {1, 13, 4097};
    return base[b] + step[b] * (size_t)r;
}

static uint32_t seed_of(int r, int b) { return (uint32_t)(1 + 10 * r + b); }

static uint8_t pat_byte(uint32_t seed, size_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u ^ seed * 40503u ^ (uint32_t)(i >> 8) * 97u;
    return (uint8_t)(x ^ x >> 13 ^ x >> 24);
}

static void pat_fill(uint8_t *p, size_t from, size_t to, uint32_t seed)
{
    for (size_t i = from; i < to; i++)
        p[i] = pat_byte(seed, i);
}

static void pat_expect(const uint8_t *p, size_t from, size_t to, uint32_t seed, const char *what,
                       int r)
{
    for (size_t i = from; i < to; i++)
        CHECK(p[i] == pat_byte(seed, i), "rank %d: %s of rank %d at %p differs at byte %zu", rank,
              what, r, (const void *)p, i);
}

/* The region's mapping as /proc/self/maps shows it: one hmpi-* file, mapped shared,
 * already deleted; the descriptor HMPI keeps is that file, mode 0600, without a name.
 * Returns whether such a region is mapped; *holds_p: whether p lies inside it. */
static int check_region_mapping(const void *p, int *holds_p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL, "/proc/self/maps");
    char line[1024], path[768] = "";
    *holds_p = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        int off = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &off) < 3)
            continue;
        char *name = line + off;
        name[strcspn(name, "\n")] = '\0';
        if (!strstr(name, "/hmpi-"))
            continue;
        CHECK(path[0] == '\0' || strcmp(path, name) == 0,
              "rank %d: two region files mapped: '%s' and '%s'", rank, path, name);
        snprintf(path, sizeof path, "%s", name);
        CHECK(perms[0] == 'r' && perms[1] == 'w' && perms[3] == 's',
              "rank %d: the region is mapped %s, not rw-s", rank, perms);
        if ((uintptr_t)p >= lo && (uintptr_t)p < hi)
            *holds_p = 1;
    }
    fclose(f);
    if (path[0] == '\0')
        return 0;
    const char *dir = getenv("HMPI_SHM_DIR");
    if (dir != NULL)
        CHECK(strncmp(path, dir, strlen(dir)) == 0 && strncmp(path + strlen(dir), "/hmpi-", 6) == 0,
              "rank %d: the region '%s' is not in HMPI_SHM_DIR=%s", rank, path, dir);
    const char *del = " (deleted)";
    size_t pl = strlen(path), dl = strlen(del);
    CHECK(pl > dl && strcmp(path + pl - dl, del) == 0,
          "rank %d: the region file '%s' still has a name after MPI_Init", rank, path);

    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL, "/proc/self/fd");
    struct dirent *e;
    int fds = 0;
    while ((e = readdir(d)) != NULL) {
        char link[300], target[768];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strcmp(target, path) != 0)
            continue;
        struct stat st;
        CHECK(stat(link, &st) == 0, "stat %s", link);
        CHECK(S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600 && st.st_nlink == 0 &&
                  st.st_uid == geteuid(),
              "rank %d: region file mode %o, links %lu", rank, (unsigned)st.st_mode,
              (unsigned long)st.st_nlink);
        fds++;
    }
    closedir(d);
    CHECK(fds == 1, "rank %d: %d descriptors of the region, want the one HMPI keeps", rank, fds);
    return 1;
}

int main(int argc, char **argv)
{
    int expect_on = 1, kill_rank = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect=on") == 0)
            expect_on = 1;
        else if (strcmp(argv[i], "--expect=off") == 0)
            expect_on = 0;
        else if (strncmp(argv[i], "--kill-rank=", 12) == 0)
            kill_rank = atoi(argv[i] + 12);
        else {
            fprintf(stderr, "usage: %s [--expect=on|off] [--kill-rank=r]\n", argv[0]);
            return 2;
        }
    }
    const char *ns = getenv("HMPI_NODE_SIZE");
    node_size = ns ? atoi(ns) : 0;

    /* Before MPI_Init: private memory, still usable after. */
    size_t pre_len = 5000;
    uint8_t *pre = malloc(pre_len);
    CHECK(pre != NULL, "malloc before MPI_Init");
    pat_fill(pre, 0, pre_len, 999);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    find_hmpi();

    int active = hmpi_active();
    CHECK(active == expect_on, "rank %d: HMPI_Active() = %d, expected %d", rank, active, expect_on);
    CHECK(!hmpi_is_shared(pre) && hmpi_owner(pre) == -1,
          "rank %d: memory from before MPI_Init claims to be shared", rank);
    pat_expect(pre, 0, pre_len, 999, "pre-init block", rank);

    if (kill_rank >= 0) {
        if (rank == kill_rank)
            raise(SIGKILL);
        MPI_Barrier(MPI_COMM_WORLD); /* never completes: the launcher must end the job */
        fprintf(stderr, "rank %d: the barrier completed without rank %d\n", rank, kill_rank);
        MPI_Finalize();
        return 3;
    }

    /* My buffers: malloc, calloc (zeroed) and one grown by realloc. */
    uint8_t *buf[NB];
    buf[0] = malloc(len_of(rank, 0));
    buf[1] = calloc(len_of(rank, 1), 1);
    CHECK(buf[1] != NULL, "calloc");
    for (size_t i = 0; i < len_of(rank, 1); i++)
        CHECK(buf[1][i] == 0, "rank %d: calloc'ed byte %zu is %#x", rank, i, buf[1][i]);
    buf[2] = malloc(1000);
    CHECK(buf[2] != NULL, "malloc");
    pat_fill(buf[2], 0, 1000, seed_of(rank, 2));
    buf[2] = realloc(buf[2], len_of(rank, 2));
    CHECK(buf[2] != NULL, "realloc");
    pat_expect(buf[2], 0, 1000, seed_of(rank, 2), "realloc'ed buffer", rank);
    int want_shared = expect_on && MALLOC_SHARED;
    for (int b = 0; b < NB; b++) {
        CHECK(buf[b] != NULL, "allocation %d", b);
        pat_fill(buf[b], 0, len_of(rank, b), seed_of(rank, b));
        CHECK(hmpi_is_shared(buf[b]) == want_shared,
              "rank %d: HMPI_Is_shared(buffer %d) = %d, expected %d", rank, b,
              hmpi_is_shared(buf[b]), want_shared);
        CHECK(hmpi_owner(buf[b]) == (want_shared ? local_of(rank) : -1),
              "rank %d: HMPI_Owner(buffer %d) = %d", rank, b, hmpi_owner(buf[b]));
    }
    int holds = 0, mapped = check_region_mapping(buf[0], &holds);
    CHECK(mapped == expect_on, "rank %d: region mapped: %d, expected %d", rank, mapped, expect_on);
    CHECK(holds == want_shared, "rank %d: buffer in the region's mapping: %d, expected %d", rank,
          holds, want_shared);

    uint64_t mine[NB], *all = malloc(sizeof(uint64_t) * NB * (size_t)size);
    CHECK(all != NULL, "malloc");
    for (int b = 0; b < NB; b++)
        mine[b] = (uint64_t)(uintptr_t)buf[b];
    MPI_Allgather(mine, NB, MPI_UINT64_T, all, NB, MPI_UINT64_T, MPI_COMM_WORLD);

    /* Read every local peer's buffers in place, byte for byte. */
    int peers = 0;
    if (want_shared) {
        for (int r = 0; r < size; r++) {
            if (!same_node(r))
                continue;
            peers++;
            for (int b = 0; b < NB; b++) {
                const uint8_t *p = (const uint8_t *)(uintptr_t)all[NB * r + b];
                CHECK(hmpi_is_shared(p) && hmpi_owner(p) == local_of(r),
                      "rank %d: buffer %d of rank %d at %p: shared %d, owner %d (want %d)", rank, b,
                      r, (const void *)p, hmpi_is_shared(p), hmpi_owner(p), local_of(r));
                pat_expect(p, 0, len_of(r, b), seed_of(r, b), "buffer", r);
            }
        }
        int node_ranks = node_size > 0 ? node_size : size;
        if (node_size > 0 && (node_of(rank) + 1) * node_size > size)
            node_ranks = size - node_of(rank) * node_size;
        CHECK(peers == node_ranks, "rank %d: %d ranks on my node, want %d", rank, peers,
              node_ranks);

        /* Write back: every rank stamps its slot of each local peer's buffer 1. */
        MPI_Barrier(MPI_COMM_WORLD);
        for (int r = 0; r < size; r++) {
            if (!same_node(r))
                continue;
            uint8_t *p = (uint8_t *)(uintptr_t)all[NB * r + 1];
            size_t at = (size_t)STAMP * (size_t)local_of(rank);
            for (size_t i = 0; i < STAMP; i++)
                p[at + i] = pat_byte(5000u + (uint32_t)rank, i);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int r = 0; r < size; r++) {
            if (!same_node(r))
                continue;
            size_t at = (size_t)STAMP * (size_t)local_of(r);
            for (size_t i = 0; i < STAMP; i++)
                CHECK(buf[1][at + i] == pat_byte(5000u + (uint32_t)r, i),
                      "rank %d: the stamp of rank %d in my buffer differs at %zu", rank, r, i);
        }
        size_t stamped = (size_t)STAMP * (size_t)peers;
        pat_expect(buf[1], stamped, len_of(rank, 1), seed_of(rank, 1), "unstamped rest", rank);
        pat_fill(buf[1], 0, stamped, seed_of(rank, 1)); /* as it was, for the ring below */
    }

    /* A ring of messages, from and into the same kind of buffers. (MPI_Sendrecv rings
     * have a test of their own: sendrecv_ring.c.) */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int b = 0; b < NB; b++) {
        uint8_t *in = malloc(len_of(prev, b));
        CHECK(in != NULL, "malloc");
        MPI_Request req[2];
        MPI_Status st[2];
        MPI_Irecv(in, (int)len_of(prev, b), MPI_BYTE, prev, b, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(buf[b], (int)len_of(rank, b), MPI_BYTE, next, b, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, st);
        pat_expect(in, 0, len_of(prev, b), seed_of(prev, b), "message", prev);
        free(in);
    }
    int sum = 0, one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size, "allreduce gave %d", sum);

    MPI_Barrier(MPI_COMM_WORLD); /* nobody reads my buffers any more */
    free(buf[0]);
    free(buf[1]);
    free(all);
    free(pre);
    if (rank == 0)
        printf("heap_shared: %d ranks, node size %d, HMPI %s, %d local peers checked in place\n",
               size, node_size, active ? "active" : "off", peers);
    MPI_Finalize();
    /* Heap blocks outlive MPI_Finalize: still readable, then freed (no MPI_Abort now). */
    for (size_t i = 0; i < len_of(rank, 2); i++) {
        if (buf[2][i] != pat_byte(seed_of(rank, 2), i)) {
            fprintf(stderr, "rank %d: buffer 2 differs at byte %zu after MPI_Finalize\n", rank, i);
            return 1;
        }
    }
    free(buf[2]);
    void *late = malloc(1 << 20);
    if (late == NULL)
        return 1;
    memset(late, 1, 1 << 20);
    free(late);
    return 0;
}
