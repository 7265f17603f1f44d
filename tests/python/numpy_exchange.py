#!/usr/bin/env python3
"""numpy_exchange.py: mpi4py sending numpy arrays on a ring, through the buffer
interface (Send/Recv, Isend/Irecv, Sendrecv, Allreduce) and the pickle interface
(send/recv). Every element received is compared with what its sender wrote; rank 0
prints "numpy_exchange: OK" when every rank got everything right."""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
left, right = (rank - 1) % size, (rank + 1) % size
ITERS = 10
SIZES = (1, 100, 10_000, 1_000_000)  # float64 elements: 8 B to 8 MB


def values(sender, n, it):
    return np.arange(n, dtype=np.float64) + sender * 1e7 + it * 1e3


bad = 0
for it in range(ITERS):
    for n in SIZES:
        # Blocking, ordered by parity so that no rank waits on a cycle.
        out, inn = values(rank, n, it), np.full(n, -1.0)
        if rank % 2 == 0:
            comm.Send([out, MPI.DOUBLE], dest=right, tag=n % 1000)
            comm.Recv([inn, MPI.DOUBLE], source=left, tag=n % 1000)
        else:
            comm.Recv([inn, MPI.DOUBLE], source=left, tag=n % 1000)
            comm.Send([out, MPI.DOUBLE], dest=right, tag=n % 1000)
        bad += not np.array_equal(inn, values(left, n, it))
        # Nonblocking the other way round the ring.
        inn = np.full(n, -1.0)
        reqs = [comm.Irecv(inn, source=right, tag=7), comm.Isend(out, dest=left, tag=7)]
        MPI.Request.Waitall(reqs)
        bad += not np.array_equal(inn, values(right, n, it))
        # Sendrecv with a 2-D integer array.
        m = np.arange(n, dtype=np.int32).reshape(-1, 1) * (rank + 1)
        got = np.zeros_like(m)
        comm.Sendrecv(m, dest=right, recvbuf=got, source=left)
        bad += not np.array_equal(got, np.arange(n, dtype=np.int32).reshape(-1, 1) * (left + 1))
    # A Python object holding arrays (pickled).
    obj = {"rank": rank, "a": values(rank, 5, it), "it": it}
    if rank % 2 == 0:
        comm.send(obj, dest=right, tag=99)
        got = comm.recv(source=left, tag=99)
    else:
        got = comm.recv(source=left, tag=99)
        comm.send(obj, dest=right, tag=99)
    bad += got["rank"] != left or got["it"] != it or not np.array_equal(got["a"], values(left, 5, it))

total = np.array([bad, 1], dtype=np.int64)
comm.Allreduce(MPI.IN_PLACE, total, op=MPI.SUM)
if bad:
    print(f"rank {rank}: {bad} wrong arrays", flush=True)
if rank == 0 and total[0] == 0 and total[1] == size:
    print("numpy_exchange: OK", flush=True)
