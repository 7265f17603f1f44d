# Waits that sleep (HMPI_WAIT=sleep, src/shm/park.h): every family of wait parks while a
# late rank keeps it waiting, and the late rank's publish wakes it. On one node the
# waiters must also have slept (--cpu: under 10% of a core while waiting); on simulated
# nodes (HMPI_NODE_SIZE=1, 2) some waits go through the MPI below, which spins.
hmpi_mpi_test(wait_sleep SOURCES wait_sleep.c RANKS 2 4 8
  ENV ${env_mpi} HMPI_WAIT=sleep ARGS --cpu TIMEOUT 120)
hmpi_mpi_test(wait_sleep_nodes SOURCES wait_sleep.c RANKS 2 4 8 NODE_SIZES 1 2
  ENV ${env_mpi} HMPI_WAIT=sleep TIMEOUT 120)
# The default policy (auto) with the same late ranks: data only.
hmpi_mpi_test(wait_auto SOURCES wait_sleep.c RANKS 4 8 ENV ${env_mpi} TIMEOUT 120)
