/* p2p.h: HMPI's point-to-point engine as the floors above it use it. For mpi/: one
 * operation per MPI call, from arguments its entry point checked, each taking the engine
 * lock itself: a send, a receive, a send-receive, a probe, a matched receive, the start,
 * completion (the Wait/Test family), cancel and free of any request, ours or the MPI
 * below's. For coll/, rma/ and opi/: the waits in the MPI below that move the engine
 * meanwhile. The request object is req.h's; the short ways that MPI_Send and MPI_Recv
 * inline are short.h's; the engine's own state is engine.h's (private to p2p/). */
#ifndef HMPI_P2P_H
#define HMPI_P2P_H

#include "req.h"
#include "../shm/wait.h"

/* ---- the operations ------------------------------------------------------------------ */

/* A buffer and a peer on a communicator, as the entry point checked them. c is the
 * communicator's state, or NULL when HMPI does not accelerate comm: then only comm,
 * buf, count, type, peer and tag are read, and the operation goes to the MPI below. */
typedef struct {
    hmpi_comm_t *c;
    MPI_Comm comm;
    void *buf;
    int count;
    MPI_Datatype type;
    hmpi_layout_t t; /* count elements of type (with c) */
    int peer;        /* dest, or source (MPI_ANY_SOURCE, MPI_PROC_NULL) */
    int tag;
    int mode; /* a send's HMPI_MODE_* */
} hmpi_p2p_args_t;

/* Every operation returns an MPI error code. An error it decides itself it raises, through
 * the handler of the operation's communicator, as the error of MPI function fn (the one
 * that first decides an error raises it: errors.h); the MPI below raises its own. */

/* A send of a's mode: blocking when req is NULL; else nonblocking, and with persistent
 * the inactive request of MPI_Send_init and its kin. */
int hmpi_p2p_send(const hmpi_p2p_args_t *a, int persistent, MPI_Request *req, const char *fn);
/* A receive: blocking into status (MPI_STATUS_IGNORE allowed) when req is NULL; else as
 * hmpi_p2p_send. */
int hmpi_p2p_recv(const hmpi_p2p_args_t *a, int persistent, MPI_Request *req, MPI_Status *status,
                  const char *fn);
/* MPI_Sendrecv and MPI_Isendrecv (req not NULL), s and r on one communicator; with
 * replace, r->buf is also s's data (MPI_Sendrecv_replace), sent from a packed copy. */
int hmpi_p2p_sendrecv(const hmpi_p2p_args_t *s, const hmpi_p2p_args_t *r, int replace,
                      MPI_Request *req, MPI_Status *status, const char *fn);
/* MPI_Probe (block), MPI_Iprobe, and with message not NULL MPI_Mprobe and MPI_Improbe,
 * of (source, tag) on comm (c: its state, or NULL). *flag is set by the nonblocking
 * forms only. */
int hmpi_p2p_probe(hmpi_comm_t *c, MPI_Comm comm, int source, int tag, int block, int *flag,
                   MPI_Message *message, MPI_Status *status, const char *fn);
/* MPI_Mrecv (req NULL) and MPI_Imrecv of *message into (buf, count, type). Only the
 * message knows its communicator, so the buffer is checked here; an error leaves the
 * message alone. */
int hmpi_p2p_mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *req,
                   MPI_Status *status, const char *fn);

/* Partitioned point-to-point (MPI-4.1 §4; part.c), where the MPI below has it
 * (HMPI_MPI4_CALLS). MPI_Psend_init (send) and MPI_Precv_init: partitions partitions of
 * count elements each of a's type at a's buffer, with a's peer and tag on a's
 * communicator (a->t: the layout of one element; a->count is not read). HMPI's request
 * for a peer on this node or MPI_PROC_NULL, the MPI below's own (info goes to it) for
 * another node's peer or a communicator HMPI does not accelerate. */
int hmpi_p2p_part_init(const hmpi_p2p_args_t *a, int send, int partitions, MPI_Count count,
                       MPI_Info info, MPI_Request *req, const char *fn);
/* MPI_Pready (ONE: partition low), MPI_Pready_range (low..high) and MPI_Pready_list (the
 * high partitions of list) of request req, ours or the MPI below's. */
enum { HMPI_P2P_PREADY_ONE, HMPI_P2P_PREADY_RANGE, HMPI_P2P_PREADY_LIST };
int hmpi_p2p_pready(MPI_Request req, int how, int low, int high, const int list[], const char *fn);
/* MPI_Parrived of partition of req (MPI_REQUEST_NULL and an inactive request say true). */
int hmpi_p2p_parrived(MPI_Request req, int partition, int *flag, const char *fn);

/* MPI_Start of *req, ours or the MPI below's. */
int hmpi_p2p_start(MPI_Request *req, const char *fn);

/* The Wait/Test family and MPI_Request_get_status, over requests ours and the MPI
 * below's mixed: ONE (MPI_Wait, MPI_Test: count 1, statuses is the status), ALL, ANY,
 * SOME (the arrays' forms), STATUS (MPI_Request_get_status: nothing is freed). wait: block
 * until the call's condition holds; else one pass. flag (tests), index (ANY), outcount
 * and indices (SOME) as the MPI calls have them. Returns the error the call returns
 * (MPI_ERR_IN_STATUS for an array whose statuses say more), raised on the request's
 * communicator (an array's: MPI_COMM_WORLD's). */
enum { HMPI_P2P_ONE, HMPI_P2P_ALL, HMPI_P2P_ANY, HMPI_P2P_SOME, HMPI_P2P_STATUS };
/* MPI 4.1's MPI_Request_get_status_all, _any and _some: the answers of Testall, Testany and
 * Testsome (wait 0), no request freed or made inactive. */
enum { HMPI_P2P_STATUS_ALL = 8, HMPI_P2P_STATUS_ANY, HMPI_P2P_STATUS_SOME };
int hmpi_p2p_complete(int what, int wait, int count, MPI_Request reqs[], int *flag, int *index,
                      int indices[], MPI_Status statuses[], const char *fn);
/* MPI_Cancel and MPI_Request_free of *req, ours or the MPI below's. */
int hmpi_p2p_cancel(MPI_Request *req);
int hmpi_p2p_free(MPI_Request *req);

/* A request for an operation its maker completes by polling (HMPI_REQ_POLL): poll(arg,
 * status) runs at each test of the request, engine lock held, until it returns 1; the
 * status it gets is empty (source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0) and
 * successful, and it may change any of it. Bound to c (errors go to its handler). */
int hmpi_p2p_poll_new(int (*poll)(void *arg, MPI_Status *status), void *arg, hmpi_comm_t *c,
                      MPI_Request *req);

/* The buffers of buffered sends (p2p/bsend.c): one of size bytes was attached (sign 1) or
 * detached (-1) in the MPI below, the process's (MPI_Buffer_attach) or a communicator's or a
 * session's (MPI 4.1), HMPI_BSEND_AUTOMATIC standing for one attached as
 * MPI_BUFFER_AUTOMATIC; or (sign 0) a flush. A detach or a flush waits for no local
 * message: HMPI's are in its heap already. */
#define HMPI_BSEND_AUTOMATIC SIZE_MAX
void hmpi_p2p_buffer(size_t size, int sign);

/* ---- progress and the waits in the MPI below ---------------------------------------- */

/* One pass of the engine (arrivals, sends in flight, the bridge, the listed requests),
 * the engine lock taken: for a query the MPI below answered "not yet" (MPI_Iprobe of a
 * remote source, ...). A program polling such a query may wait for something that needs
 * this rank's local progress first. */
void hmpi_p2p_progress_locked(void);

/* Waits for a request of the MPI below. When local peers may need this rank's
 * progress meanwhile (posted receives that a synchronous or rendezvous send waits to
 * see matched), it polls the request and moves the engine: a send and a receive that
 * match, both started, complete whatever else either rank does (MPI-4.1 §3.5), also
 * while one of them is inside a call of the MPI below. When statistics are counted, the
 * wait is counted as one of family f. Every call HMPI makes to the MPI below that waits
 * for other ranks, inside a call of the program after MPI_Init, waits here: collectives
 * as their nonblocking form (MPI_Iallgather, ...) then this, the others (MPI_Comm_split,
 * MPI_Win_create, ...) after hmpi_comm_arrive (core/comm.h). */
int hmpi_p2p_below_wait(MPI_Request *req, MPI_Status *status, hmpi_wait_family_t f);
/* MPI_Allgather of bytes from every member of comm (c's state) into all, waited for as
 * above where hmpi_comm_below_nb allows, else the blocking call: the setups' exchanges
 * (collectives, windows). Returns the below's error code. */
int hmpi_p2p_below_allgather(const hmpi_comm_t *c, const void *mine, int bytes, void *all,
                             MPI_Comm comm, hmpi_wait_family_t f);

/* Payload bytes an envelope holds: HMPI_IMMEDIATE_MAX as MPI_Init read it. The knob may
 * be lowered later (MPI_T); receivers check an immediate message against this. */
extern size_t hmpi_p2p_immediate_room;

/* provided: the thread level of MPI_Init (the engine lock is taken under
 * MPI_THREAD_MULTIPLE only). */
int hmpi_p2p_init(int provided);
void hmpi_p2p_finalize(void);
/* HMPI's self changed (node.h; MPI_Finalize while sessions keep HMPI up): the engine's
 * private copy of it is made anew. Returns 0. */
int hmpi_p2p_world_moved(void);

#endif
