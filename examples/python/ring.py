#!/usr/bin/env python3
"""ring.py: mpi4py passing a numpy array around a ring of ranks, each adding its rank.

    HMPI_STATS=1 hmpirun -n 4 /usr/bin/python3 ring.py

numpy allocates the array with malloc, which HMPI serves from the node's shared heap
once MPI is initialized (importing mpi4py.MPI does that), so each message is copied
once, by its receiver. HMPI_STATS=1 shows it: the table's synergistic row counts those
messages.
"""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
n = 1 << 20  # 8 MB of float64

if rank == 0:
    a = np.zeros(n)
    comm.Send(a, dest=1 % size)
    comm.Recv(a, source=size - 1)
    # Every rank added its rank to every element: 0 + 1 + ... + size-1.
    ok = np.all(a == size * (size - 1) // 2)
    print("ring:", "OK" if ok else "WRONG", flush=True)
else:
    a = np.empty(n)
    comm.Recv(a, source=rank - 1)
    a += rank
    comm.Send(a, dest=(rank + 1) % size)
