/* check.c: the argument checks that need more than a compare (check.h): which
 * datatypes are committed, NULL buffers, ops against datatypes. The fast paths ask
 * one question of a small lock-free table; the rest runs only when a check fails.
 *
 * Committed datatypes: neither MPICH nor Open MPI tells whether a type is committed,
 * so HMPI watches MPI_Type_commit, MPI_Type_dup (a duplicate of a committed type is
 * committed) and MPI_Type_free, also from Fortran (mpi/fortran.c). A predefined type
 * enters the table the first time it is checked. The table is open addressing over
 * handle values; a freed type's slot becomes a tombstone that the next insertion on
 * its probe path reuses, so the table holds the live types only. When more than
 * SLOTS types are live at once, types HMPI cannot place are taken as committed:
 * the check is lost, never a correct program. */
#include "check.h"
#include "../node/node.h"

#include <stdatomic.h>
#include <stdint.h>

enum { SLOTS = 1024 };
#define EMPTY ((uintptr_t)0)
#define TOMB ((uintptr_t)1) /* no handle of either MPI is 0 or 1 */

/* Writers CAS a slot from EMPTY or TOMB to a handle, or store TOMB over their own
 * type at free; readers load. A racing commit and free of one type is erroneous MPI. */
static _Atomic uintptr_t table[SLOTS];
static atomic_int overflow;

static uintptr_t key(MPI_Datatype type) { return (uintptr_t)type; }
static unsigned home(uintptr_t k)
{
    return (unsigned)((k ^ (k >> 12) ^ (k >> 24)) * 0x9E3779B1u) % SLOTS;
}

static int known(MPI_Datatype type)
{
    uintptr_t k = key(type);
    for (unsigned i = home(k), n = 0; n < SLOTS; n++, i = (i + 1) % SLOTS) {
        uintptr_t s = atomic_load_explicit(&table[i], memory_order_acquire);
        if (s == k)
            return 1;
        if (s == EMPTY)
            return 0;
    }
    return 0;
}

void hmpi_check_type_committed(MPI_Datatype type)
{
    uintptr_t k = key(type);
    for (;;) {
        unsigned i = home(k), n = 0;
        _Atomic uintptr_t *free_slot = NULL;
        for (; n < SLOTS; n++, i = (i + 1) % SLOTS) {
            uintptr_t s = atomic_load_explicit(&table[i], memory_order_acquire);
            if (s == k)
                return;
            if (s == TOMB && !free_slot)
                free_slot = &table[i];
            if (s == EMPTY) {
                if (!free_slot)
                    free_slot = &table[i];
                break;
            }
        }
        if (!free_slot) {
            atomic_store(&overflow, 1);
            return;
        }
        uintptr_t expect = atomic_load_explicit(free_slot, memory_order_relaxed);
        if ((expect == EMPTY || expect == TOMB) &&
            atomic_compare_exchange_strong(free_slot, &expect, k))
            return;
    }
}

void hmpi_check_type_freed(MPI_Datatype type)
{
    uintptr_t k = key(type);
    for (unsigned i = home(k), n = 0; n < SLOTS; n++, i = (i + 1) % SLOTS) {
        uintptr_t s = atomic_load_explicit(&table[i], memory_order_acquire);
        if (s == k)
            atomic_store_explicit(&table[i], TOMB, memory_order_release);
        if (s == k || s == EMPTY)
            return;
    }
}

/* A type that is usable without MPI_Type_commit: predefined, or an f90 parameterized
 * type (MPI_Type_create_f90_*, which the standard calls predefined). */
static int predefined(MPI_Datatype type)
{
    int ni, na, nd, combiner;
    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return -1;
    return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
           combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

int hmpi_check_type(MPI_Datatype type, const char *arg)
{
    if (type == MPI_DATATYPE_NULL)
        return hmpi_err_what(MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL", arg);
    if (!hmpi_knobs.CHECK || known(type))
        return MPI_SUCCESS;
    int p = predefined(type);
    if (p < 0)
        return hmpi_err_what(MPI_ERR_TYPE, "%s is not a valid datatype", arg);
    if (p) {
        hmpi_check_type_committed(type);
        return MPI_SUCCESS;
    }
    if (atomic_load(&overflow))
        return MPI_SUCCESS;
    return hmpi_err_what(MPI_ERR_TYPE, "%s is not committed (MPI_Type_commit)", arg);
}

/* NULL with count > 0 is an error unless the data does not start at the buffer's
 * address: MPI_BOTTOM is NULL in both MPIs, and a datatype with absolute addresses
 * (true lower bound not 0) or without data is legal there. This is MPICH's rule
 * (MPIR_ERRTEST_USERBUFFER); Open MPI's is alike. */
int hmpi_check_buf_null(const void *buf, int count, MPI_Datatype type, const char *arg)
{
    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    if (buf || count <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &lb, &extent) != MPI_SUCCESS)
        return MPI_SUCCESS;
    if (size > 0 && lb == 0)
        return hmpi_err_what(MPI_ERR_BUFFER, "%s is NULL with count %d", arg, count);
    return MPI_SUCCESS;
}

int hmpi_check_buf(const void *buf, int count, MPI_Datatype type, int side)
{
    static const char *const names[][3] = {{"buf", "count", "datatype"},
                                           {"sendbuf", "sendcount", "sendtype"},
                                           {"recvbuf", "recvcount", "recvtype"},
                                           {"origin_addr", "origin_count", "origin_datatype"},
                                           {"result_addr", "result_count", "result_datatype"}};
    int err = hmpi_check_count(count, names[side][1]);
    if (!err)
        err = hmpi_check_type(type, names[side][2]);
    if (!err)
        err = hmpi_check_buf_only(buf, count, type, names[side][0]);
    return err;
}

int hmpi_check_reduce(const void *sendbuf, const void *recvbuf, int count, MPI_Datatype type,
                      MPI_Op op)
{
    int err = hmpi_check_count(count, "count");
    if (!err)
        err = hmpi_check_type(type, "datatype");
    if (!err)
        err = hmpi_check_op(op, type);
    if (!err && sendbuf != MPI_IN_PLACE)
        err = hmpi_check_buf_only(sendbuf, count, type, "sendbuf");
    if (!err && recvbuf != MPI_IN_PLACE)
        err = hmpi_check_buf_only(recvbuf, count, type, "recvbuf");
    return err;
}

int hmpi_check_rma(const void *oaddr, int ocount, MPI_Datatype otype, int target, int wsize,
                   int tcount, MPI_Datatype ttype)
{
    int err = oaddr == MPI_IN_PLACE ? MPI_SUCCESS
                                    : hmpi_check_buf(oaddr, ocount, otype, HMPI_SIDE_ORIGIN);
    if (!err && target != MPI_PROC_NULL && (unsigned)target >= (unsigned)wsize)
        err = hmpi_err_what(MPI_ERR_RANK, "target_rank %d is not a rank of a window of size %d",
                            target, wsize);
    if (!err)
        err = hmpi_check_count(tcount, "target_count");
    if (!err)
        err = hmpi_check_type(ttype, "target_datatype");
    return err;
}

int hmpi_check_acc_op(MPI_Op op, MPI_Datatype type)
{
    const MPI_Op ops[] = {MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD, MPI_LAND,
                          MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
                          MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};
    if (op == MPI_OP_NULL)
        return hmpi_err_what(MPI_ERR_OP, "op is MPI_OP_NULL");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (op != ops[i])
            continue;
        /* Neither MPI checks the pair of a one-sided operation when it is issued
         * (MPICH 4.0.2 returns success and computes a wrong result or none, Open MPI
         * 4.1.4's osc/rdma calls a NULL kernel): the MPI below's MPI_Reduce_local
         * says, for local targets and remote ones alike. */
        if (hmpi_op_outside(op, type, 1) && !hmpi_op_below_accepts(op, type))
            return hmpi_err_what(MPI_ERR_OP, "op is not defined for the datatype (MPI-4.1 "
                                             "6.9.2), and the MPI below refuses the pair too");
        return MPI_SUCCESS;
    }
    return hmpi_err_what(MPI_ERR_OP, "op is not predefined (one-sided accumulates take no "
                                     "user-defined op)");
}

int hmpi_reduce_local_quiet(const void *in, void *inout, int count, MPI_Datatype type, MPI_Op op)
{
    /* Under sessions alone its error would go to the initial handler and end the job
     * (core/errors.h): the pair counts as refused, and HMPI keeps to the standard's. */
    if (!hmpi_mpi_world)
        return MPI_ERR_OP;
    MPI_Errhandler world, self;
    PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
    PMPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int err = PMPI_Reduce_local(in, inout, count, type, op);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, world);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, self);
    PMPI_Errhandler_free(&world);
    PMPI_Errhandler_free(&self);
    return err;
}

int hmpi_op_below_accepts(MPI_Op op, MPI_Datatype type)
{
    unsigned char a[64] = {0}, b[64] = {0};
    int size = 0;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0 || size > (int)sizeof a)
        return 0;
    return hmpi_reduce_local_quiet(a, b, 1, type, op) == MPI_SUCCESS;
}

int hmpi_check_rank_slow(int code, int rank, int size, const char *arg)
{
    return hmpi_err_what(code, "%s %d is not a rank of a communicator of size %d", arg, rank, size);
}

static int among(MPI_Datatype t, const MPI_Datatype *list, int n)
{
    for (int i = 0; i < n; i++)
        if (t == list[i] && t != MPI_DATATYPE_NULL)
            return 1;
    return 0;
}

/* An op of a reduction: MPI_OP_NULL never is one. Whether a predefined op is defined
 * for the datatype is the MPI below's to say (hmpi_op_outside): MPICH and Open MPI
 * accept pairs the standard does not list, each its own. */
int hmpi_check_op(MPI_Op op, MPI_Datatype type)
{
    (void)type;
    if (op == MPI_OP_NULL)
        return hmpi_err_what(MPI_ERR_OP, "op is MPI_OP_NULL");
    return MPI_SUCCESS;
}

/* The predefined ops on the named datatypes the standard does not define them for
 * (MPI-4.1 §6.9.2): the clear cases; a user op takes any type, and derived types and
 * the types not named here stay HMPI's (MPI_Reduce_local combines them). */
int hmpi_op_outside(MPI_Op op, MPI_Datatype type, int acc)
{
    const MPI_Datatype pairs[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT,
                                  MPI_2INT,      MPI_SHORT_INT,  MPI_LONG_DOUBLE_INT};
    const MPI_Datatype reals[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
    const MPI_Datatype ints[] = {MPI_INT,      MPI_LONG,      MPI_SHORT,
                                 MPI_UNSIGNED, MPI_LONG_LONG, MPI_INT32_T,
                                 MPI_INT64_T,  MPI_UINT32_T,  MPI_UINT64_T};
    const MPI_Datatype cplx[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX};
    const MPI_Datatype none[] = {MPI_WCHAR, MPI_PACKED}; /* no op is defined on them */
    int loc = op == MPI_MINLOC || op == MPI_MAXLOC;
    int bits = op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR;
    int logic = op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR;
    int order = op == MPI_MAX || op == MPI_MIN;
    int arith = op == MPI_SUM || op == MPI_PROD;
    int moves = op == MPI_REPLACE || op == MPI_NO_OP; /* accumulates only */
    if (moves)
        return !acc;
    if (!loc && !bits && !logic && !order && !arith)
        return 0; /* a user op */
    if (among(type, pairs, 6))
        return !loc;
    if (loc)
        return among(type, reals, 3) || among(type, ints, 9) || among(type, cplx, 2) ||
               among(type, none, 2) || type == MPI_BYTE || type == MPI_C_BOOL;
    if (type == MPI_BYTE)
        return !bits;
    if (type == MPI_C_BOOL)
        return !logic;
    if (among(type, reals, 3))
        return bits || logic;
    if (among(type, cplx, 2))
        return !arith;
    return among(type, none, 2);
}

/* A call on a communicator HMPI does not accelerate: the MPI below checks it, except
 * MPI_COMM_NULL, which HMPI raises on MPI_COMM_WORLD as the standard asks (Open MPI
 * 4.1 raises some on MPI_COMM_NULL's handler, which is always fatal). Returns the code
 * raised, or MPI_SUCCESS for the caller to pass the call on. */
int hmpi_check_comm_null(MPI_Comm comm, const char *fn)
{
    if (comm != MPI_COMM_NULL || !hmpi_node.active)
        return MPI_SUCCESS;
    hmpi_err_what(MPI_ERR_COMM, "comm is MPI_COMM_NULL");
    return hmpi_err_comm(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
}
