/* scale.c: the per-rank costs that grow with the number of local ranks P (issue 25), one
 * mode per run, for `bench/run scale`:
 *   init       MPI_Init's wall time (max over ranks) and each rank's resident memory
 *              after MPI_Init and a barrier (/proc/self/status: RssAnon, RssShmem,
 *              RssFile), and the shared-memory files rank 0 maps: HMPI's region
 *              (HMPI_SHM_DIR/hmpi-*) and the MPI below's, their allocated bytes per node;
 *   recv       rank 0 receives ITERS 8-byte messages from rank 1 (one active peer), each
 *              already sent when MPI_Recv is called (a FIFO outside MPI says so), so
 *              the receive never waits; the other ranks sleep outside MPI meanwhile;
 *   recv_any   the same with MPI_ANY_SOURCE (the receiver cannot look at one peer);
 *   barrier    ITERS barriers of all ranks, rank 0 arriving last (it sleeps 2 ms first);
 *   allreduce  ITERS 8-byte MPI_SUM allreduces, the same way.
 * recv, barrier and allreduce are for valgrind --tool=callgrind --collect-atstart=no on
 * rank 0: collection is switched on around each counted call only (client requests),
 * after WARM uncounted rounds, and the counts are dumped after each call (one file per
 * call), so the runner takes the median call: a call that had to wait (a peer not
 * scheduled yet, on oversubscribed cores) spins for a number of instructions that
 * depends on timing, the median one does not. Outside callgrind the requests do nothing.
 * Plain MPI, linked with the MPI below; run under hmpirun (or the launcher alone).
 *   scale init | scale {recv|recv_any|barrier|allreduce} ITERS DIR   (DIR: every rank's) */
#define _GNU_SOURCE
#include "bench_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else /* no valgrind headers (Debian's valgrind package has them): no counts */
#define CALLGRIND_TOGGLE_COLLECT ((void)0)
#define CALLGRIND_DUMP_STATS ((void)0)
#endif

enum { WARM = 20 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "scale: %s: %s\n", what, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The kB value of "key:" in /proc/self/status, or -1. */
static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, n) == 0 && line[n] == ':')
            v = atol(line + n + 1);
    }
    if (f)
        fclose(f);
    return v;
}

/* Allocated bytes of the distinct files under dir that this rank maps, split into
 * HMPI's (name "hmpi-...") and the others'. The files may be unlinked already (HMPI
 * unlinks its region once every local rank mapped it): they are reached through
 * /proc/self/map_files, whose st_blocks is the file's, shared by the node. */
static void mapped_shm(const char *dir, double *hmpi_p, double *other_p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    unsigned long seen[256];
    int nseen = 0;
    double hmpi = 0, other = 0;
    size_t dl = strlen(dir);
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi, ino;
        char path[4096] = "";
        if (sscanf(line, "%lx-%lx %*s %*s %*s %lu %4095[^\n]", &lo, &hi, &ino, path) < 4)
            continue;
        const char *p = path + strspn(path, " ");
        if (strncmp(p, dir, dl) != 0 || p[dl] != '/')
            continue;
        int dup = 0;
        for (int i = 0; i < nseen; i++)
            dup |= seen[i] == ino;
        if (dup || nseen == 256)
            continue;
        seen[nseen++] = ino;
        char mf[64];
        struct stat st;
        snprintf(mf, sizeof mf, "/proc/self/map_files/%lx-%lx", lo, hi);
        if (stat(mf, &st) != 0)
            continue;
        double bytes = 512.0 * (double)st.st_blocks;
        if (strncmp(p + dl + 1, "hmpi-", 5) == 0)
            hmpi += bytes;
        else
            other += bytes;
    }
    if (f)
        fclose(f);
    *hmpi_p = hmpi;
    *other_p = other;
}

static int mode_init(double t0)
{
    double init = now() - t0;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    double mine[4] = {init, (double)status_kb("RssAnon"), (double)status_kb("RssShmem"),
                      (double)status_kb("RssFile")};
    double sum[4], max[4];
    MPI_Reduce(mine, sum, 4, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine, max, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        const char *dir = getenv("HMPI_SHM_DIR");
        double hmpi, other;
        mapped_shm(dir && *dir ? dir : "/dev/shm", &hmpi, &other);
        char v[MPI_MAX_LIBRARY_VERSION_STRING], state[128];
        bench_mpi_version(v, sizeof v);
        bench_hmpi_state(mine, NULL, state, sizeof state);
        printf("# mpi: %s\n# hmpi: %s\ntest,size,value,unit\n", v, state);
        printf("init_max,%d,%.6f,s\n", size, max[0]);
        printf("init_mean,%d,%.6f,s\n", size, sum[0] / size);
        printf("rss_anon,%d,%.3f,MiB/rank\n", size, sum[1] / size / 1024);
        printf("rss_shmem,%d,%.3f,MiB/rank\n", size, sum[2] / size / 1024);
        printf("rss_file,%d,%.3f,MiB/rank\n", size, sum[3] / size / 1024);
        printf("rss_shmem_sum,%d,%.3f,MiB\n", size, sum[2] / 1024);
        printf("shm_hmpi,%d,%.3f,MiB/node\n", size, hmpi / MiB);
        printf("shm_below,%d,%.3f,MiB/node\n", size, other / MiB);
    }
    MPI_Finalize();
    return 0;
}

/* One byte through a FIFO, each way. */
static void poke(int fd)
{
    char c = 1;
    if (write(fd, &c, 1) != 1)
        die("write");
}

static void wait_poke(int fd)
{
    char c;
    if (read(fd, &c, 1) != 1)
        die("read");
}

/* Rank 0 receives from rank 1; rank 1 sends only after rank 0 said it took the last
 * one, and tells rank 0 when the next is sent: each MPI_Recv finds its message. */
static void mode_recv(int rank, int any, long iters, const char *dir)
{
    int from = any ? MPI_ANY_SOURCE : 1;
    char to0[4096], to1[4096];
    snprintf(to0, sizeof to0, "%s/to0", dir);
    snprintf(to1, sizeof to1, "%s/to1", dir);
    if (rank == 0 &&
        ((mkfifo(to0, 0600) && errno != EEXIST) || (mkfifo(to1, 0600) && errno != EEXIST)))
        die("mkfifo");
    MPI_Barrier(MPI_COMM_WORLD);
    long v = 0;
    if (rank == 0) {
        int in = open(to0, O_RDONLY), out = open(to1, O_WRONLY);
        if (in < 0 || out < 0)
            die("open");
        for (long i = 0; i < WARM + iters; i++) {
            wait_poke(in);
            if (i >= WARM)
                CALLGRIND_TOGGLE_COLLECT;
            MPI_Recv(&v, 1, MPI_LONG, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (i >= WARM) {
                CALLGRIND_TOGGLE_COLLECT;
                CALLGRIND_DUMP_STATS;
            }
            if (v != i) {
                fprintf(stderr, "scale: message %ld holds %ld\n", i, v);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            poke(out);
        }
        close(in);
        close(out);
    } else if (rank == 1) {
        int out = open(to0, O_WRONLY), in = open(to1, O_RDONLY);
        if (in < 0 || out < 0)
            die("open");
        for (long i = 0; i < WARM + iters; i++) {
            v = i;
            MPI_Send(&v, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD);
            poke(out);
            wait_poke(in);
        }
        close(in);
        close(out);
    }
}

static void mode_coll(int rank, int allreduce, long iters)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (long i = 0; i < WARM + iters; i++) {
        long in = rank + i, out = 0;
        if (rank == 0)
            usleep(2000); /* the others arrive first */
        if (rank == 0 && i >= WARM)
            CALLGRIND_TOGGLE_COLLECT;
        if (allreduce)
            MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0 && i >= WARM) {
            CALLGRIND_TOGGLE_COLLECT;
            CALLGRIND_DUMP_STATS;
        }
        long want = (long)size * (size - 1) / 2 + (long)size * i;
        if (allreduce && out != want) {
            fprintf(stderr, "scale: allreduce %ld gave %ld, not %ld\n", i, out, want);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int known = strcmp(mode, "init") == 0 ? argc == 2
                : (strcmp(mode, "recv") == 0 || strcmp(mode, "recv_any") == 0 ||
                   strcmp(mode, "barrier") == 0 || strcmp(mode, "allreduce") == 0)
                    ? argc == 4
                    : 0;
    long iters = argc == 4 ? atol(argv[2]) : 0;
    if (!known || (argc == 4 && iters < 1)) {
        fprintf(stderr, "usage: scale init | scale {recv|recv_any|barrier|allreduce} ITERS DIR\n");
        return 2;
    }
    double t0 = now();
    MPI_Init(&argc, &argv);
    if (strcmp(mode, "init") == 0)
        return mode_init(t0);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "scale: run with 2 ranks or more\n");
        MPI_Finalize();
        return 2;
    }
    char done[4096];
    snprintf(done, sizeof done, "%s/done", argv[3]);
    if (strncmp(mode, "recv", 4) == 0) {
        mode_recv(rank, strcmp(mode, "recv_any") == 0, iters, argv[3]);
        if (rank == 0) { /* the idle ranks wait outside MPI, off the cores */
            int fd = open(done, O_CREAT | O_WRONLY, 0600);
            if (fd < 0)
                die("open done");
            close(fd);
        } else if (rank > 1) {
            while (access(done, F_OK) != 0)
                usleep(20000);
        }
    } else {
        mode_coll(rank, strcmp(mode, "allreduce") == 0, iters);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("scale: %s, %d ranks, %ld calls: OK\n", mode, size, iters);
    MPI_Finalize();
    return 0;
}
