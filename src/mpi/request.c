/* request.c: every MPI function that takes a request. Each checks what the standard
 * asks of its arguments and makes one call of the request's home (p2p/req.c), which
 * serves requests of HMPI's and of the MPI below alike, mixed in one array; the error
 * comes back with the communicator whose handler raises it. */
#include "../core/check.h"
#include "../p2p/p2p.h"

static int request_null(const char *fn)
{
    return hmpi_raise_in(MPI_COMM_WORLD, hmpi_err_what(MPI_ERR_REQUEST, "request is NULL"), fn);
}

/* An array argument of Wait/Test*: count not negative, the array there when count > 0. */
static int bad_array(int count, const MPI_Request *requests, const char *fn)
{
    if (count >= 0 && (count == 0 || requests))
        return MPI_SUCCESS;
    int err = count < 0
                  ? hmpi_err_what(MPI_ERR_COUNT, "count %d is negative", count)
                  : hmpi_err_what(MPI_ERR_ARG, "array_of_requests is NULL with count %d", count);
    return hmpi_err_comm(MPI_COMM_WORLD, err, fn);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    HMPI_ENTER("MPI_Wait");
    if (!request)
        return request_null("MPI_Wait");
    if (hmpi_req_take_coll_done(request, status))
        return MPI_SUCCESS;
    return hmpi_p2p_complete(HMPI_P2P_ONE, 1, 1, request, NULL, NULL, NULL, status, "MPI_Wait");
}
HMPI_PMPI(Wait)

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    HMPI_ENTER("MPI_Test");
    if (!request)
        return request_null("MPI_Test");
    if (hmpi_req_take_coll_done(request, status)) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    return hmpi_p2p_complete(HMPI_P2P_ONE, 0, 1, request, flag, NULL, NULL, status, "MPI_Test");
}
HMPI_PMPI(Test)

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    HMPI_ENTER("MPI_Request_get_status");
    return hmpi_p2p_complete(HMPI_P2P_STATUS, 0, 1, &request, flag, NULL, NULL, status,
                             "MPI_Request_get_status");
}
HMPI_PMPI(Request_get_status)

#if HMPI_MPI41_CALLS
int MPI_Request_get_status_any(int count, MPI_Request requests[], int *index, int *flag,
                               MPI_Status *status)
{
    HMPI_ENTER("MPI_Request_get_status_any");
    return bad_array(count, requests, "MPI_Request_get_status_any")
               ?: hmpi_p2p_complete(HMPI_P2P_STATUS_ANY, 0, count, requests, flag, index, NULL,
                                    status, "MPI_Request_get_status_any");
}
HMPI_PMPI(Request_get_status_any)

int MPI_Request_get_status_all(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    HMPI_ENTER("MPI_Request_get_status_all");
    return bad_array(count, requests, "MPI_Request_get_status_all")
               ?: hmpi_p2p_complete(HMPI_P2P_STATUS_ALL, 0, count, requests, flag, NULL, NULL,
                                    statuses, "MPI_Request_get_status_all");
}
HMPI_PMPI(Request_get_status_all)

int MPI_Request_get_status_some(int incount, MPI_Request requests[], int *outcount, int indices[],
                                MPI_Status statuses[])
{
    HMPI_ENTER("MPI_Request_get_status_some");
    return bad_array(incount, requests, "MPI_Request_get_status_some")
               ?: hmpi_p2p_complete(HMPI_P2P_STATUS_SOME, 0, incount, requests, NULL, outcount,
                                    indices, statuses, "MPI_Request_get_status_some");
}
HMPI_PMPI(Request_get_status_some)
#endif

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    HMPI_ENTER("MPI_Waitall");
    return bad_array(count, requests, "MPI_Waitall")
               ?: hmpi_p2p_complete(HMPI_P2P_ALL, 1, count, requests, NULL, NULL, NULL, statuses,
                                    "MPI_Waitall");
}
HMPI_PMPI(Waitall)

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    HMPI_ENTER("MPI_Testall");
    return bad_array(count, requests, "MPI_Testall")
               ?: hmpi_p2p_complete(HMPI_P2P_ALL, 0, count, requests, flag, NULL, NULL, statuses,
                                    "MPI_Testall");
}
HMPI_PMPI(Testall)

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    HMPI_ENTER("MPI_Waitany");
    return bad_array(count, requests, "MPI_Waitany")
               ?: hmpi_p2p_complete(HMPI_P2P_ANY, 1, count, requests, NULL, index, NULL, status,
                                    "MPI_Waitany");
}
HMPI_PMPI(Waitany)

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    HMPI_ENTER("MPI_Testany");
    return bad_array(count, requests, "MPI_Testany")
               ?: hmpi_p2p_complete(HMPI_P2P_ANY, 0, count, requests, flag, index, NULL, status,
                                    "MPI_Testany");
}
HMPI_PMPI(Testany)

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    HMPI_ENTER("MPI_Waitsome");
    return bad_array(incount, requests, "MPI_Waitsome")
               ?: hmpi_p2p_complete(HMPI_P2P_SOME, 1, incount, requests, NULL, outcount, indices,
                                    statuses, "MPI_Waitsome");
}
HMPI_PMPI(Waitsome)

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    HMPI_ENTER("MPI_Testsome");
    return bad_array(incount, requests, "MPI_Testsome")
               ?: hmpi_p2p_complete(HMPI_P2P_SOME, 0, incount, requests, NULL, outcount, indices,
                                    statuses, "MPI_Testsome");
}
HMPI_PMPI(Testsome)

int MPI_Request_free(MPI_Request *request)
{
    HMPI_ENTER("MPI_Request_free");
    return hmpi_p2p_free(request);
}
HMPI_PMPI(Request_free)

int MPI_Cancel(MPI_Request *request)
{
    HMPI_ENTER("MPI_Cancel");
    return hmpi_p2p_cancel(request);
}
HMPI_PMPI(Cancel)

int MPI_Start(MPI_Request *request)
{
    HMPI_ENTER("MPI_Start");
    return hmpi_p2p_start(request, "MPI_Start");
}
HMPI_PMPI(Start)

int MPI_Startall(int count, MPI_Request requests[])
{
    HMPI_ENTER("MPI_Startall");
    int err = bad_array(count, requests, "MPI_Startall");
    for (int i = 0; i < count && !err; i++)
        err = hmpi_p2p_start(&requests[i], "MPI_Startall");
    return err;
}
HMPI_PMPI(Startall)
