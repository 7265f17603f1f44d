/* bsend.c: MPI_Buffer_attach/detach. The accounting of buffered sends to local peers,
 * which the attached buffer bounds, is p2p/bsend.c's. */
#include "../core/errors.h"
#include "../p2p/p2p.h"

int MPI_Buffer_attach(void *buffer, int size)
{
    HMPI_ENTER("MPI_Buffer_attach");
    int err = PMPI_Buffer_attach(buffer, size);
    if (err == MPI_SUCCESS)
        hmpi_p2p_buffer((size_t)size, 0);
    return err;
}
HMPI_PMPI(Buffer_attach)

int MPI_Buffer_detach(void *buffer_addr, int *size)
{
    HMPI_ENTER("MPI_Buffer_detach");
    hmpi_p2p_buffer(0, 1);
    return PMPI_Buffer_detach(buffer_addr, size);
}
HMPI_PMPI(Buffer_detach)

#if MPI_VERSION >= 4
int MPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    HMPI_ENTER("MPI_Buffer_attach_c");
    int err = PMPI_Buffer_attach_c(buffer, size);
    if (err == MPI_SUCCESS)
        hmpi_p2p_buffer((size_t)size, 0);
    return err;
}
HMPI_PMPI(Buffer_attach_c)

int MPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    HMPI_ENTER("MPI_Buffer_detach_c");
    hmpi_p2p_buffer(0, 1);
    return PMPI_Buffer_detach_c(buffer_addr, size);
}
HMPI_PMPI(Buffer_detach_c)
#endif
