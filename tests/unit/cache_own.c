/* cache_own.c: hmpi_cache_own (src/shm/cache.h) touches exactly the bytes of its range
 * and changes none of them. The range is put against inaccessible guard pages on both
 * sides, at every start and end offset within a line and across lines and pages, so a
 * store one byte outside it faults; the bytes inside are compared with a pattern after
 * each call. A second process reading the range meanwhile (shared memory) keeps seeing
 * the pattern. Then the bytes right beside a range inside one line, which no guard page
 * can catch: a thread counts in the words just before and just after it while the
 * range is taken back over and over; a byte of theirs read and written back by
 * hmpi_cache_own would lose counts (when the two threads run at once). */
#include "shm/cache.h"
#include "../check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { COUNTS = 2000000 };

/* One line: a counter word, the range (bytes 8..55), another counter word. */
static struct {
    _Alignas(64) volatile uint32_t before;
    uint32_t pad0;
    uint8_t range[48];
    volatile uint32_t after;
    uint32_t pad1;
} line;
static atomic_int counting = 1; /* the counter thread is still counting */

static void *counter(void *arg)
{
    (void)arg;
    for (uint32_t i = 0; i < COUNTS; i++) {
        line.before = line.before + 1; /* this thread is their only writer */
        line.after = line.after + 1;
    }
    atomic_store_explicit(&counting, 0, memory_order_release);
    return NULL;
}

static uint8_t pat(size_t i) { return (uint8_t)(i * 131u + 7u); }

int main(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t room = 4 * page; /* guard, 2 pages of data, guard */
    uint8_t *map = mmap(NULL, room, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED, "mmap of %zu bytes failed", room);
    uint8_t *data = map + page;
    size_t len_data = 2 * page;
    for (size_t i = 0; i < len_data; i++)
        data[i] = pat(i);
    CHECK(mprotect(map, page, PROT_NONE) == 0, "mprotect of the low guard");
    CHECK(mprotect(map + 3 * page, page, PROT_NONE) == 0, "mprotect of the high guard");

    /* A reader in another process: the bytes never change under it. */
    pid_t child = fork();
    CHECK(child >= 0, "fork failed");
    if (child == 0) {
        for (int round = 0; round < 2000; round++)
            for (size_t i = 0; i < len_data; i += 61)
                if (data[i] != pat(i))
                    _exit(3);
        _exit(0);
    }

    size_t calls = 0;
    /* Ranges against the low guard: start at the data's first byte, any length. */
    static const size_t lens[] = {0, 1, 2, 7, 8, 63, 64, 65, 127, 128, 129, 4095, 4096, 4097};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        hmpi_cache_own(data, lens[k]);
        calls++;
        /* ... and against the high guard: end at the data's last byte. */
        hmpi_cache_own(data + len_data - lens[k], lens[k]);
        calls++;
    }
    /* Every start and end offset within a line, across a page boundary. */
    for (size_t s = page - 64; s < page + 64; s++)
        for (size_t e = s; e < s + 200 && e <= len_data; e += 13) {
            hmpi_cache_own(data + s, e - s);
            calls++;
        }
    /* The whole data, then what is past it on both sides is still a guard. */
    hmpi_cache_own(data, len_data);
    calls++;
    for (size_t i = 0; i < len_data; i++)
        CHECK(data[i] == pat(i), "byte %zu changed to %u (want %u) after %zu calls", i, data[i],
              pat(i), calls);

    int status = 0;
    CHECK(waitpid(child, &status, 0) == child, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the reading process saw a changed byte (status %d)", status);
    munmap(map, room);

    _Static_assert(sizeof line == 64, "one line");
    pthread_t t;
    CHECK(pthread_create(&t, NULL, counter, NULL) == 0, "pthread_create");
    size_t rounds = 0;
    while (atomic_load_explicit(&counting, memory_order_acquire)) {
        hmpi_cache_own(line.range, sizeof line.range);
        rounds++;
    }
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    CHECK(line.before == COUNTS && line.after == COUNTS,
          "the words beside the range lost counts: %u and %u of %u (%zu takes)", line.before,
          line.after, (unsigned)COUNTS, rounds);
    printf("cache_own: %zu ranges, every byte kept, nothing outside touched; "
           "%zu takes beside a counting thread lost nothing\n",
           calls, rounds);
    return 0;
}
