! rma_mpi.f90: one-sided communication through `use mpi` (Open MPI binds every window
! call of mpif.h/`use mpi` to PMPI_*, so HMPI's own entry points must take them all):
! a fence epoch with MPI_Put on an MPI_Win_create window, then an exclusive lock epoch
! with MPI_Accumulate, each element checked; prints "rma_mpi: OK".
program rma_mpi
  use mpi
  implicit none
  integer, parameter :: n = 1000
  integer :: rank, nprocs, right, left, ierr, win, bad
  double precision, allocatable, asynchronous :: a(:), buf(:)
  integer(MPI_ADDRESS_KIND) :: sz, zero
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)
  allocate(a(n), buf(n))
  a = -1
  buf = rank
  zero = 0
  sz = n * 8
  call MPI_Win_create(a, sz, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call MPI_Put(buf, n, MPI_DOUBLE_PRECISION, right, zero, n, MPI_DOUBLE_PRECISION, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  bad = count(a /= left)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)   ! read before any rank accumulates into a
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win, ierr)
  call MPI_Accumulate(buf, n, MPI_DOUBLE_PRECISION, right, zero, n, MPI_DOUBLE_PRECISION, &
                      MPI_SUM, win, ierr)
  call MPI_Win_unlock(right, win, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win, ierr)
  bad = bad + count(a /= 2 * left)
  call MPI_Win_unlock(rank, win, ierr)
  call MPI_Win_free(win, ierr)
  if (bad /= 0) then
    print *, 'rank', rank, ': ', bad, ' errors'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  if (rank == 0) print '(a)', 'rma_mpi: OK'
  call MPI_Finalize(ierr)
end program rma_mpi
