/* queue_within.c: hmpi_queue_take_within (src/shm/queue.h) on chains whose links a
 * corrupted peer rewrote: a link out of the range, a node linked to itself, a link back
 * to the newest node or to one in the middle. Each take must end, return every node it
 * reached once, oldest first, with no loop, and say how the chain ended. */
#include "shm/queue.h"
#include "../check.h"

#include <stdint.h>

enum { N = 5 };

typedef struct {
    hmpi_qnode_t link;
    int id;
    char pad[48]; /* a node of 64 bytes, as an envelope is whole lines */
} node_t;

static node_t nodes[N];
static hmpi_queue_t queue;

/* Pushes nodes 0..N-1 (N-1 ends up at the head: 4 -> 3 -> 2 -> 1 -> 0). */
static void push_all(void)
{
    for (int i = 0; i < N; i++) {
        nodes[i].id = i;
        hmpi_queue_push(&queue, &nodes[i].link);
    }
}

/* Takes the queue and checks the chain against want[0..nwant) and the ending. */
static void take_and_check(const char *what, const int *want, int nwant, int ending)
{
    int broken = HMPI_QUEUE_WHOLE;
    hmpi_qnode_t *n =
        hmpi_queue_take_within(&queue, (uintptr_t)nodes, sizeof nodes, sizeof(node_t), &broken);
    CHECK(broken == ending, "%s: the take ended with %d, want %d", what, broken, ending);
    CHECK(hmpi_queue_empty(&queue), "%s: the queue is not empty after the take", what);
    int k = 0;
    for (; n && k <= N; n = hmpi_queue_next(n), k++) {
        CHECK(k < nwant, "%s: more than %d nodes (a loop?)", what, nwant);
        int id = ((node_t *)(void *)n)->id;
        CHECK(id == want[k], "%s: node %d of the chain is %d, want %d", what, k, id, want[k]);
    }
    CHECK(k == nwant, "%s: %d nodes, want %d", what, k, nwant);
}

int main(void)
{
    static const int all[N] = {0, 1, 2, 3, 4};

    push_all();
    take_and_check("intact", all, N, HMPI_QUEUE_WHOLE);

    push_all();
    nodes[2].link.next = (hmpi_qnode_t *)(uintptr_t)0x1000; /* the nodes behind 2 are lost */
    take_and_check("outside", all + 2, 3, HMPI_QUEUE_OUTSIDE);

    push_all();
    nodes[2].link.next = (hmpi_qnode_t *)((char *)&nodes[2] + 4); /* inside, misaligned */
    take_and_check("misaligned", all + 2, 3, HMPI_QUEUE_OUTSIDE);

    push_all();
    nodes[2].link.next = &nodes[2].link;
    take_and_check("self", all + 2, 3, HMPI_QUEUE_LOOP);

    push_all();
    nodes[0].link.next = &nodes[4].link; /* the oldest leads back to the newest */
    take_and_check("back to the head", all, N, HMPI_QUEUE_LOOP);

    push_all();
    nodes[1].link.next = &nodes[3].link;
    take_and_check("into the middle", all + 1, 4, HMPI_QUEUE_LOOP);

    push_all(); /* the marks of the takes before do not stay: pushes rewrite the links */
    take_and_check("intact again", all, N, HMPI_QUEUE_WHOLE);

    printf("queue_within: 7 chains taken, loops and bad links cut\n");
    return 0;
}
