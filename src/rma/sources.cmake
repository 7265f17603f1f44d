# The RMA part (src/rma): windows, operations, synchronization. Included by
# src/CMakeLists.txt; paths are relative to src/.
list(APPEND HMPI_SOURCES
  rma/window.c rma/shared.c rma/move.c rma/ops.c rma/acc.c rma/op.c
  rma/sync_fence.c rma/sync_pscw.c rma/sync_lock.c
)
