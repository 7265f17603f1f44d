/* request.c: HMPI's request objects and their MPI_Request handles. One table reserved
 * at init (address space only; pages appear as requests are used), a free list of
 * slots, and an encoding that never collides with the MPI below's handles.
 * Private to the process; guarded by the engine lock. */
#include "p2p.h"
#include "../common/assert.h"
#include "../common/log.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

hmpi_req_t *hmpi_req_table;
static uint32_t top;          /* slots ever handed out */
static uint32_t free_head;    /* 1 + index of the first free slot, 0: none */

hmpi_req_t *hmpi_req_new(hmpi_req_kind_t kind)
{
    uint32_t i;
    if (free_head) {
        i = free_head - 1;
        HMPI_ASSERT(i < top); /* the free list holds only slots handed out before */
        HMPI_ASSERT_INTERNAL(hmpi_req_table[i].kind == HMPI_REQ_DONE);
        free_head = hmpi_req_table[i].free_next;
    } else if (top < HMPI_REQ_MAX) {
        i = top++;
    } else {
        hmpi_log_error("more than %d HMPI requests outstanding", HMPI_REQ_MAX);
        return NULL;
    }
    hmpi_req_t *r = &hmpi_req_table[i];
    hmpi_req_zero(r);
    r->kind = (uint8_t)kind;
    return r;
}

void hmpi_req_release(hmpi_req_t *r)
{
    if (r == hmpi_req_sent() || r == hmpi_req_proc_null())
        return; /* shared by every operation it stands for, never freed */
    uint32_t i = (uint32_t)(r - hmpi_req_table);
    HMPI_ASSERT(r >= hmpi_req_table && i < top); /* else the free list takes a stranger */
    if (r->holds_comm)
        hmpi_comm_unref(r->comm);
    r->holds_comm = 0;
    if (r->holds_type)
        hmpi_type_release(r->type);
    r->holds_type = 0;
    r->kind = HMPI_REQ_DONE;
    r->free_next = free_head;
    free_head = i + 1;
}

MPI_Request hmpi_req_new_done(void)
{
    hmpi_req_t *r = hmpi_req_new(HMPI_REQ_DONE);
    if (!r)
        return MPI_REQUEST_NULL;
    r->complete = 1;
    hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    return hmpi_req_handle(r);
}

MPI_Request hmpi_req_done(int proc_null)
{
    hmpi_p2p_lock();
    MPI_Request h = hmpi_req_new_done();
    if (h != MPI_REQUEST_NULL && proc_null)
        hmpi_status_set(&hmpi_req_obj(h)->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
    hmpi_p2p_unlock();
    return h;
}

int hmpi_req_table_init(void)
{
    if (hmpi_req_table)
        return 0;
    void *p = mmap(NULL, (size_t)HMPI_REQ_MAX * sizeof(hmpi_req_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        hmpi_log_error("cannot reserve the request table");
        return -1;
    }
    hmpi_req_table = p;
    top = 2; /* slot 0 is hmpi_req_sent(), slot 1 hmpi_req_proc_null() */
    hmpi_req_t *sent = hmpi_req_sent();
    hmpi_req_zero(sent);
    sent->kind = HMPI_REQ_SEND;
    sent->complete = 1;
    hmpi_status_set(&sent->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    hmpi_req_t *null = hmpi_req_proc_null();
    hmpi_req_zero(null);
    null->kind = HMPI_REQ_RECV;
    null->complete = 1;
    hmpi_status_set(&null->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
    return 0;
}
