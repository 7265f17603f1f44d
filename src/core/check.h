/* check.h: argument checks shared by the entry points of every part, as the MPI
 * standard specifies them. Each returns MPI_SUCCESS, or an error class after
 * describing the argument (hmpi_err_what) for the caller to raise with its name.
 * With HMPI_CHECK=0 the checks HMPI does not need for its own safety (buffers,
 * committedness, op and datatype agreement) are skipped; ranks, roots, tags and counts
 * index HMPI's tables and are always checked. */
#ifndef HMPI_CORE_CHECK_H
#define HMPI_CORE_CHECK_H

#include "errors.h"
#include "../common/knobs.h"

/* count of a buffer argument (arg names it in the message): not negative. */
static inline int hmpi_check_count(int count, const char *arg)
{
    if (__builtin_expect(count >= 0, 1))
        return MPI_SUCCESS;
    return hmpi_err_what(MPI_ERR_COUNT, "%s %d is negative", arg, count);
}

/* comm is not one HMPI accelerates: raises MPI_ERR_COMM in fn when it is
 * MPI_COMM_NULL and HMPI is active, returning the code; else MPI_SUCCESS, and the
 * caller passes the call to the MPI below, which checks the rest itself. */
int hmpi_check_comm_null(MPI_Comm comm, const char *fn);

/* A datatype communication may use: not MPI_DATATYPE_NULL, committed. */
int hmpi_check_type(MPI_Datatype type, const char *arg);

/* buf, count, type of one buffer argument: count, type, and buf NULL only where MPI
 * allows it (see check.c). side names them in messages: buf/count/datatype, or
 * sendbuf/sendcount/sendtype, or recvbuf/recvcount/recvtype. */
enum { HMPI_SIDE_ONE, HMPI_SIDE_SEND, HMPI_SIDE_RECV, HMPI_SIDE_ORIGIN, HMPI_SIDE_RESULT };
int hmpi_check_buf(const void *buf, int count, MPI_Datatype type, int side);

/* The arguments of a reduction: count, datatype, op, and the two buffers (pass
 * MPI_IN_PLACE for a buffer that is not significant here). */
int hmpi_check_reduce(const void *sendbuf, const void *recvbuf, int count, MPI_Datatype type,
                      MPI_Op op);

/* The buffer check alone, for callers that checked count and type already. */
int hmpi_check_buf_null(const void *buf, int count, MPI_Datatype type, const char *arg);
static inline int hmpi_check_buf_only(const void *buf, int count, MPI_Datatype type,
                                      const char *arg)
{
    if (__builtin_expect(buf != NULL || count == 0, 1) || !hmpi_knobs.CHECK)
        return MPI_SUCCESS;
    return hmpi_check_buf_null(buf, count, type, arg);
}

/* A reduction op (MPI_OP_NULL never is one). */
int hmpi_check_op(MPI_Op op, MPI_Datatype type);

/* 1 when predefined op on named type is a pair MPI-4.1 §6.9.2 does not define (acc: in
 * an accumulate, where MPI_REPLACE and MPI_NO_OP are ops too). HMPI has no kernel for
 * such a pair and makes no rule of its own: a collective goes to the MPI below whole,
 * which computes it (an extension: MPICH's logical ops on floating point, Open MPI's
 * every op on MPI_BYTE) or refuses it with MPI_ERR_OP; an accumulate asks the MPI
 * below's MPI_Reduce_local (rma/acc.c). The same answer in every rank. */
int hmpi_op_outside(MPI_Op op, MPI_Datatype type, int acc);

/* The MPI below's MPI_Reduce_local, its error returned and not raised: the handlers it
 * reports to (MPI_COMM_WORLD's, MPI_COMM_SELF's, fatal by default) return errors for
 * this one call, so that a refusal becomes the caller's error on its own object. Under
 * sessions alone, where no handler could take it, MPI_ERR_OP without asking. */
int hmpi_reduce_local_quiet(const void *in, void *inout, int count, MPI_Datatype type, MPI_Op op);
/* Does the MPI below's MPI_Reduce_local take op on named type (one zeroed element)? */
int hmpi_op_below_accepts(MPI_Op op, MPI_Datatype type);

/* A rank argument: 0 <= rank < size, or one of the two values allowed (pass
 * MPI_PROC_NULL twice when only it is); arg names it ("dest", "source", "root"). */
int hmpi_check_rank_slow(int code, int rank, int size, const char *arg);
static inline int hmpi_check_rank(int code, int rank, int size, int ok1, int ok2, const char *arg)
{
    if (__builtin_expect((unsigned)rank < (unsigned)size, 1) || rank == ok1 || rank == ok2)
        return MPI_SUCCESS;
    return hmpi_check_rank_slow(code, rank, size, arg);
}

/* The arguments of a one-sided operation on a window of wsize ranks: the origin
 * buffer (pass MPI_IN_PLACE to skip it, as for MPI_NO_OP), the target rank, count and
 * datatype. */
int hmpi_check_rma(const void *oaddr, int ocount, MPI_Datatype otype, int target, int wsize,
                   int tcount, MPI_Datatype ttype);

/* An op of the accumulate family: a predefined op (MPI_REPLACE and MPI_NO_OP included). */
int hmpi_check_acc_op(MPI_Op op, MPI_Datatype type);

/* A root argument of a collective on an intracommunicator: 0 <= root < size. */
static inline int hmpi_check_root(int root, int size)
{
    if (__builtin_expect((unsigned)root < (unsigned)size, 1))
        return MPI_SUCCESS;
    return hmpi_check_rank_slow(MPI_ERR_ROOT, root, size, "root");
}

/* The datatype table (check.c): commits and frees of the program. */
void hmpi_check_type_committed(MPI_Datatype type);
void hmpi_check_type_freed(MPI_Datatype type);

#endif
