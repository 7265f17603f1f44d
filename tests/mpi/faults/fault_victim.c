/* fault_victim.c: one rank fails on purpose while the others wait inside HMPI, for
 * tests/mpi/faults/driver.py, which judges the job from outside (it ends in bounded time,
 * no process of it survives, the region directory stays empty). Modes (argv[1]):
 *   kill-recv-mid   rank 1 SIGKILLs itself once a large message starts landing in
 *                   its buffer; rank 0 waits in MPI_Send for the copy to finish
 *   kill-send-mid   rank 0 SIGKILLs itself once its large message starts landing in
 *                   rank 1's buffer; rank 1 is in MPI_Recv, then MPI_Barrier
 *   kill-recv-pipe | kill-send-pipe
 *                   the same with a send buffer malloc'ed before MPI_Init (private):
 *                   with HMPI_CMA=0 the message goes by the pipelined bounce, the
 *                   sender filling while the receiver copies out
 *   kill-part-send | kill-part-recv
 *                   a partitioned transfer of 4 partitions of 64 MiB (heap buffers): once
 *                   the receiver saw partition 0 arrive (MPI_Parrived) and said so, the
 *                   sender (rank 0) SIGKILLs itself while the receiver waits in MPI_Wait
 *                   for the rest, or the receiver (rank 1) SIGKILLs itself while the
 *                   sender, having marked every partition, waits in MPI_Wait for its
 *                   buffer back (where the MPI has partitioned calls)
 *   kill-recv | kill-barrier | kill-fence
 *                   the last rank SIGKILLs itself while the others wait for it in
 *                   MPI_Recv / MPI_Barrier / MPI_Win_fence
 *   kill-iallreduce every rank starts an MPI_Iallreduce of 1 MiB (heap buffers); the last
 *                   SIGKILLs itself 500 ms after its start, in the middle of it, while the
 *                   others wait for it in MPI_Wait
 *   abort-recv | abort-barrier | abort-fence
 *                   the same, but the last rank calls MPI_Abort(MPI_COMM_WORLD, 7)
 *   hold DIR        every rank writes "pid address length" of a heap buffer to
 *                   DIR/rank.N and waits (at most 60 s) for DIR/release: another
 *                   user's process probes the ranks meanwhile
 *   occupy          before MPI_Init, takes the whole address range where HMPI places
 *                   its region; then as "ring"
 *   ring [on|off]   a ring of 1 MiB messages and an allreduce; checks HMPI_Active()
 *   fill MIB        every rank mallocs and touches MIB MiB in 1 MiB blocks (for a
 *                   region's file system that fills up during the run)
 * A rank about to fail prints "fault_victim: ... at <unix time>" so the driver can
 * measure how long the job takes to end after it. */
#define _GNU_SOURCE /* gettid, SIGEV_THREAD_ID */
#define CHECK_WITH_MPI
#include "../../check.h"
#include "hmpi.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { BIG = 256 << 20 }; /* large enough to take tens of ms to copy */

static int rank, size;

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Says what the victim does and when, on stderr and, since a launcher tearing the job
 * down may drop a dying rank's last output, also in the file $FAULT_VICTIM_REPORT. */
static void report(const char *what)
{
    char line[128];
    int n = snprintf(line, sizeof line, "fault_victim: rank %d %s at %.3f\n", rank, what, wall());
    fputs(line, stderr);
    fflush(stderr);
    const char *path = getenv("FAULT_VICTIM_REPORT");
    int fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND, 0600) : -1;
    if (fd >= 0) {
        ssize_t w = write(fd, line, (size_t)n);
        (void)w;
        close(fd);
    }
}

static void die_now(const char *what)
{
    report(what);
    raise(SIGKILL);
}

/* A buffer in the shared heap when HMPI is active: malloc's, or OPI_Alloc's where malloc
 * stays private (sanitizer builds, HMPI_NO_MALLOC_INTERPOSE). Never freed. */
static uint8_t *shared_buffer(size_t len)
{
    void *p = malloc(len);
    CHECK(p != NULL, "malloc %zu", len);
    if (!HMPI_Is_shared(p) && HMPI_Active()) {
        free(p);
        CHECK(OPI_Alloc(&p, len) == MPI_SUCCESS && p != NULL, "OPI_Alloc %zu", len);
    }
    return p;
}

/* ---- killed in the middle of a transfer -------------------------------------------- */

/* A timer in the victim looks at the receive buffer every 200 us, in the victim's own
 * thread: once the first page has landed and not all have, the transfer is under way
 * and the victim dies. (A watcher thread lost that race in CI: on two cores it competed
 * with both copying ranks and woke when the 256 MiB had landed.) The signal handler
 * makes only async-signal-safe calls: the line is formatted by hand and the report file
 * opened before. A transfer the timer misses is repeated, up to MID_ROUNDS times. */
enum { MID_ROUNDS = 5, TICK_US = 200 };

static volatile const uint8_t *mid_buf;
static volatile sig_atomic_t mid_armed;
static int mid_report_fd = -1;

static char *put_uint(char *p, unsigned long v, int min_digits)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0 || n < min_digits);
    while (n > 0)
        *p++ = digits[--n];
    return p;
}

static char *put_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

static void on_tick(int sig)
{
    (void)sig;
    if (!mid_armed || mid_buf[0] == 0)
        return;
    unsigned long landed = 0, pages = BIG / 4096;
    for (size_t i = 0; i < BIG; i += 4096)
        landed += mid_buf[i] != 0;
    if (landed == pages)
        return; /* missed: the transfer is over */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char line[160], *p = line;
    p = put_str(p, "fault_victim: rank ");
    p = put_uint(p, (unsigned long)rank, 1);
    p = put_str(p, " SIGKILLs itself with ");
    p = put_uint(p, landed, 1);
    p = put_str(p, " of ");
    p = put_uint(p, pages, 1);
    p = put_str(p, " pages landed at ");
    p = put_uint(p, (unsigned long)ts.tv_sec, 1);
    *p++ = '.';
    p = put_uint(p, (unsigned long)(ts.tv_nsec / 1000000), 3);
    *p++ = '\n';
    ssize_t w = write(STDERR_FILENO, line, (size_t)(p - line));
    if (mid_report_fd >= 0)
        w = write(mid_report_fd, line, (size_t)(p - line));
    (void)w;
    kill(getpid(), SIGKILL);
}

/* Ticks of the timer go to the calling thread (the one that copies in HMPI's waits). */
static void start_ticks(void)
{
    const char *path = getenv("FAULT_VICTIM_REPORT");
    mid_report_fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND, 0600) : -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_tick;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction: %s", strerror(errno));
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGALRM;
    ev._sigev_un._tid = gettid();
    timer_t timer;
    CHECK(timer_create(CLOCK_MONOTONIC, &ev, &timer) == 0, "timer_create: %s", strerror(errno));
    struct itimerspec every = {{0, TICK_US * 1000L}, {0, TICK_US * 1000L}};
    CHECK(timer_settime(timer, 0, &every, NULL) == 0, "timer_settime: %s", strerror(errno));
}

/* preinit: rank 0's send buffer, malloc'ed before MPI_Init (outside the heap), or NULL */
static void kill_mid(int victim, uint8_t *preinit)
{
    CHECK(size >= 2, "needs 2 ranks");
    uint8_t *buf = rank == 0 && preinit ? preinit : shared_buffer(BIG);
    if (rank == 0)
        memset(buf, 0xA5, BIG);
    /* The receiver's buffer address: the sender watches it when it is the victim
     * (it can read it in place: the buffer is in the shared heap). */
    uint64_t at = (uint64_t)(uintptr_t)buf;
    MPI_Bcast(&at, 1, MPI_UINT64_T, 1, MPI_COMM_WORLD);
    mid_buf = (volatile const uint8_t *)(uintptr_t)at;
    if (rank == victim) {
        CHECK(rank != 0 || HMPI_Is_shared((void *)(uintptr_t)at),
              "the receive buffer is not shared: the sender cannot watch it");
        start_ticks();
    }
    for (int round = 0; round < MID_ROUNDS; round++) {
        if (rank == 1)
            memset(buf, 0, BIG);
        MPI_Barrier(MPI_COMM_WORLD); /* the buffer is clear: the timer may look */
        mid_armed = rank == victim;
        if (rank == 0)
            MPI_Send(buf, BIG, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(buf, BIG, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mid_armed = 0; /* the next round clears the buffer */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    fprintf(stderr, "fault_victim: rank %d: %d transfers completed without the victim dying\n",
            rank, MID_ROUNDS);
    MPI_Finalize();
    exit(3);
}

/* ---- killed in a partitioned transfer ----------------------------------------------- */

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
static void kill_part(int victim)
{
    enum { PARTS = 4, PART = 64 << 20 };
    CHECK(size >= 2, "needs 2 ranks");
    MPI_Request q = MPI_REQUEST_NULL;
    int word = 0;
    if (rank == 0) {
        uint8_t *buf = shared_buffer((size_t)PARTS * PART);
        memset(buf, 0xA5, (size_t)PARTS * PART);
        MPI_Psend_init(buf, PARTS, PART, MPI_BYTE, 1, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
        MPI_Start(&q);
        MPI_Pready(0, q);
        MPI_Recv(&word, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (victim == 0)
            die_now("SIGKILLs itself in a partitioned send, partition 0 taken");
        MPI_Pready_range(1, PARTS - 1, q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        uint8_t *buf = shared_buffer((size_t)PARTS * PART);
        MPI_Precv_init(buf, PARTS, PART, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
        MPI_Start(&q);
        for (int flag = 0; !flag;)
            MPI_Parrived(q, 0, &flag);
        MPI_Send(&word, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
        if (victim == 1) {
            sleep_ms(300); /* the sender marks the rest and waits for its buffer */
            die_now("SIGKILLs itself in a partitioned receive, partition 0 taken");
        }
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    fprintf(stderr,
            "fault_victim: rank %d: the partitioned transfer completed without the "
            "victim\n",
            rank);
    MPI_Finalize();
    exit(3);
}
#endif

/* ---- killed or aborting while the others wait for it ------------------------------- */

static void fail_while_waited(const char *how, const char *where)
{
    int victim = size - 1, abort_it = strcmp(how, "abort") == 0;
    MPI_Win win = MPI_WIN_NULL;
    int *base = NULL;
    if (strcmp(where, "fence") == 0) {
        MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        MPI_Win_fence(0, win);
    }
    int x = rank;
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* all are up */
    if (strcmp(where, "iallreduce") == 0) {
        /* The victim's input is published when it dies: whether the others can finish
         * the sum without it is the algorithm's business; their MPI_Finalize cannot. */
        int n = (1 << 20) / (int)sizeof(double);
        double *in = (double *)shared_buffer((size_t)n * sizeof(double)),
               *out = (double *)shared_buffer((size_t)n * sizeof(double));
        for (int i = 0; i < n; i++)
            in[i] = rank + i;
        MPI_Request q;
        MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
        if (rank == victim) {
            sleep_ms(500);
            die_now("SIGKILLs itself in the middle of an MPI_Iallreduce");
        }
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Finalize();
        exit(3);
    }
    if (rank == victim) {
        sleep_ms(500); /* the others are spinning by now */
        if (abort_it) {
            report("calls MPI_Abort");
            MPI_Abort(MPI_COMM_WORLD, 7);
            sleep_ms(60000);
        }
        die_now("SIGKILLs itself");
    }
    if (strcmp(where, "recv") == 0) {
        int v;
        MPI_Recv(&v, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (strcmp(where, "barrier") == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        MPI_Win_fence(0, win);
    }
    fprintf(stderr, "fault_victim: rank %d: MPI_%s completed without the victim\n", rank, where);
    MPI_Finalize();
    exit(3);
}

/* ---- held for another user's probe --------------------------------------------------- */

static void hold(const char *dir)
{
    size_t len = 1 << 20;
    uint8_t *secret = shared_buffer(len);
    memset(secret, 0x5E, len);
    char path[512], tmp[520];
    snprintf(path, sizeof path, "%s/rank.%d", dir, rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    CHECK(f != NULL, "fopen %s: %s", tmp, strerror(errno));
    fprintf(f, "%d %#llx %zu %d\n", (int)getpid(), (unsigned long long)(uintptr_t)secret, len,
            HMPI_Is_shared(secret));
    CHECK(fclose(f) == 0 && rename(tmp, path) == 0, "publish %s", path);
    snprintf(path, sizeof path, "%s/release", dir);
    double give_up = wall() + 60;
    while (access(path, F_OK) != 0 && wall() < give_up)
        sleep_ms(20);
    for (size_t i = 0; i < len; i++)
        CHECK(secret[i] == 0x5E, "rank %d: the secret changed at byte %zu", rank, i);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("fault_victim: held, HMPI %s\n", HMPI_Active() ? "active" : "off");
}

/* ---- pass-through jobs --------------------------------------------------------------- */

static void ring(int expect_on)
{
    int active = HMPI_Active();
    CHECK(expect_on < 0 || active == expect_on, "rank %d: HMPI_Active() = %d, expected %d", rank,
          active, expect_on);
    size_t len = 1 << 20;
    uint8_t *out = malloc(len), *in = malloc(len);
    CHECK(out && in, "malloc");
    for (size_t i = 0; i < len; i++)
        out[i] = (uint8_t)(i * 7 + (size_t)rank);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Sendrecv(out, (int)len, MPI_BYTE, next, 0, in, (int)len, MPI_BYTE, prev, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (size_t i = 0; i < len; i++)
        CHECK(in[i] == (uint8_t)(i * 7 + (size_t)prev), "rank %d: byte %zu from %d", rank, i, prev);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size - 1) / 2, "allreduce gave %d", sum);
    free(out);
    free(in);
    if (rank == 0)
        printf("fault_victim: ring ok, HMPI %s\n", active ? "active" : "off");
}

/* Takes every free GiB of [16 TiB, 96 TiB), where hmpi_region_pick_addr draws the
 * region's address, with inaccessible reservations: address space only, no memory.
 * (Something, mimalloc or the loader, may already hold a piece of it.) */
static void occupy(void)
{
    const uintptr_t lo = (uintptr_t)16 << 40, hi = (uintptr_t)96 << 40, gib = (uintptr_t)1 << 30;
    size_t taken = 0;
    for (uintptr_t a = lo; a < hi; a += gib) {
        void *p = mmap((void *)a, gib, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == (void *)a)
            taken++;
        else if (p != MAP_FAILED)
            munmap(p, gib); /* an old kernel placed it elsewhere */
    }
    if (taken < (hi - lo) / gib / 2) {
        fprintf(stderr, "fault_victim: took only %zu GiB of [%#lx, %#lx)\n", taken,
                (unsigned long)lo, (unsigned long)hi);
        exit(2);
    }
}

static void fill(long mib)
{
    for (long i = 0; i < mib; i++) {
        uint8_t *p = shared_buffer(1 << 20);
        memset(p, 1, 1 << 20); /* touch every page: the file system must hold it */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("fault_victim: filled %ld MiB per rank, HMPI %s\n", mib,
               HMPI_Active() ? "active" : "off");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "occupy") == 0)
        occupy();
    uint8_t *preinit = NULL;
    if (strncmp(mode, "kill-", 5) == 0 && strstr(mode, "-pipe")) {
        preinit = malloc(BIG);
        CHECK(preinit != NULL, "malloc %d before MPI_Init", (int)BIG);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (strcmp(mode, "kill-recv-mid") == 0 || strcmp(mode, "kill-recv-pipe") == 0) {
        kill_mid(1, preinit);
    } else if (strcmp(mode, "kill-send-mid") == 0 || strcmp(mode, "kill-send-pipe") == 0) {
        kill_mid(0, preinit);
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
    } else if (strcmp(mode, "kill-part-send") == 0 || strcmp(mode, "kill-part-recv") == 0) {
        kill_part(strcmp(mode, "kill-part-send") == 0 ? 0 : 1);
#endif
    } else if (strncmp(mode, "kill-", 5) == 0) {
        fail_while_waited("kill", mode + 5);
    } else if (strncmp(mode, "abort-", 6) == 0) {
        fail_while_waited("abort", mode + 6);
    } else if (strcmp(mode, "hold") == 0 && argc > 2) {
        hold(argv[2]);
    } else if (strcmp(mode, "occupy") == 0) {
        ring(0);
    } else if (strcmp(mode, "ring") == 0) {
        ring(argc > 2 ? strcmp(argv[2], "on") == 0 : -1);
    } else if (strcmp(mode, "fill") == 0 && argc > 2) {
        fill(atol(argv[2]));
    } else {
        if (rank == 0)
            fprintf(stderr, "fault_victim: unknown mode '%s' (see the file's banner)\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return 0;
}
