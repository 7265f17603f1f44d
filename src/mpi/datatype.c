/* datatype.c: the datatype entry points HMPI intercepts: MPI_Type_free (the cache and
 * the holds of core/datatype.c), MPI_Type_commit and MPI_Type_dup (the committed-type
 * table of core/check.c). */
#include "../core/check.h"
#include "../core/datatype.h"

int MPI_Type_free(MPI_Datatype *type)
{
    HMPI_ENTER("MPI_Type_free");
    if (type && *type != MPI_DATATYPE_NULL) {
        int held = hmpi_type_free_held(*type);
        if (held < 0)
            return hmpi_raise_in(MPI_COMM_WORLD,
                                 hmpi_err_what(MPI_ERR_TYPE, "datatype was freed already"),
                                 "MPI_Type_free");
        if (held) { /* pending operations use it: the last one frees it (hmpi_type_release),
                     * and until then it stays committed to HMPI's checks, which those
                     * operations' later steps pass through */
            *type = MPI_DATATYPE_NULL;
            return MPI_SUCCESS;
        }
        hmpi_type_forget(*type);
    }
    if (type)
        hmpi_check_type_freed(*type);
    return PMPI_Type_free(type);
}
HMPI_PMPI(Type_free)

int MPI_Type_commit(MPI_Datatype *type)
{
    HMPI_ENTER("MPI_Type_commit");
    int err = PMPI_Type_commit(type);
    if (err == MPI_SUCCESS)
        hmpi_check_type_committed(*type);
    return err;
}
HMPI_PMPI(Type_commit)

/* A duplicate of a committed type is committed (MPI-4.0 §5.1.10). */
int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    HMPI_ENTER("MPI_Type_dup");
    int err = PMPI_Type_dup(oldtype, newtype);
    if (err == MPI_SUCCESS && hmpi_check_type(oldtype, "oldtype") == MPI_SUCCESS)
        hmpi_check_type_committed(*newtype);
    return err;
}
HMPI_PMPI(Type_dup)
