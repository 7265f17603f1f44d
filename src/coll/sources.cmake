# coll/: collectives by direct access inside a node, hierarchical across nodes.
list(APPEND HMPI_SOURCES
  coll/comm.c coll/nbc.c coll/move.c
  coll/barrier.c coll/bcast.c coll/reduce.c coll/reduce_scatter.c coll/scan.c
  coll/gather.c coll/gather_hier.c coll/alltoall.c coll/neighbor.c coll/tree.c
)
