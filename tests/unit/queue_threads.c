/* queue_threads.c: the incoming queue (src/shm/queue.h) with four producer threads and
 * one consumer taking while they push, as ranks do through the shared region. Every
 * node arrives exactly once and each producer's nodes arrive in the order it pushed
 * them. Built for ThreadSanitizer too: a missing release/acquire pair is a data race
 * on the node's payload. */
#include "shm/queue.h"
#include "../check.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

enum { PRODUCERS = 4, PER_PRODUCER = 200000 };

typedef struct {
    hmpi_qnode_t link; /* first: a queue node is the start of the item */
    int producer;
    long seq;
    uint64_t payload; /* written before the push, read after the take */
} item_t;

static hmpi_queue_t queue;
static item_t *items[PRODUCERS];

static uint64_t payload_of(int p, long s)
{
    return ((uint64_t)p << 40) ^ ((uint64_t)s * 0x9E3779B97F4A7C15ull);
}

static void *produce(void *arg)
{
    int p = (int)(intptr_t)arg;
    for (long s = 0; s < PER_PRODUCER; s++) {
        item_t *it = &items[p][s];
        it->producer = p;
        it->seq = s;
        it->payload = payload_of(p, s);
        hmpi_queue_push(&queue, &it->link);
        if (s % 64 == 0)
            sched_yield(); /* let the consumer take in between: many short chains */
    }
    return NULL;
}

int main(void)
{
    for (int p = 0; p < PRODUCERS; p++) {
        items[p] = calloc(PER_PRODUCER, sizeof(item_t));
        CHECK(items[p], "out of memory");
    }
    pthread_t th[PRODUCERS];
    for (int p = 0; p < PRODUCERS; p++)
        CHECK(pthread_create(&th[p], NULL, produce, (void *)(intptr_t)p) == 0, "pthread_create");

    long next[PRODUCERS] = {0}, got = 0, takes = 0;
    while (got < (long)PRODUCERS * PER_PRODUCER) {
        hmpi_qnode_t *n = hmpi_queue_take(&queue);
        if (n)
            takes++;
        for (; n; n = n->next) {
            item_t *it = (item_t *)(void *)n;
            int p = it->producer;
            CHECK(p >= 0 && p < PRODUCERS, "node of an unknown producer %d", p);
            CHECK(it->seq == next[p], "producer %d: got %ld, expected %ld", p, it->seq, next[p]);
            CHECK(it->payload == payload_of(p, it->seq), "producer %d item %ld: payload torn", p,
                  it->seq);
            next[p]++;
            got++;
        }
    }
    for (int p = 0; p < PRODUCERS; p++)
        CHECK(pthread_join(th[p], NULL) == 0, "pthread_join");
    CHECK(hmpi_queue_take(&queue) == NULL, "nodes left after every producer's were taken");
    printf("queue_threads: %ld nodes from %d producers in %ld takes, in order\n", got, PRODUCERS,
           takes);
    for (int p = 0; p < PRODUCERS; p++)
        free(items[p]);
    return 0;
}
