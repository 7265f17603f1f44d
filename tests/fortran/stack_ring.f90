! stack_ring.f90: a ring exchange through MPI_Isend and MPI_Send (`use mpi`), 20 of each
! per rank, sizes 1 to 2^19 integers, every element checked; rank 0 prints
! "stack_ring_f: OK". Run under count_tool_f (tests/stack), a Fortran PMPI tool.
program stack_ring
  use mpi
  implicit none
  integer, parameter :: iters = 20
  integer :: ierr, rank, nranks, right, left, it, n, i, bad, total
  integer :: req(2), st(MPI_STATUS_SIZE)
  integer, allocatable :: out(:), in(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  bad = 0
  do it = 0, iters - 1
    n = 2**it
    allocate(out(n), in(n))
    do i = 1, n
      out(i) = rank * 100003 + it * 1009 + i
    end do
    in = -1
    call MPI_Irecv(in, n, MPI_INTEGER, left, it, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(out, n, MPI_INTEGER, right, it, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
    call check()
    in = -1
    if (mod(rank, 2) == 0) then
      call MPI_Send(out, n, MPI_INTEGER, right, 1000 + it, MPI_COMM_WORLD, ierr)
      call MPI_Recv(in, n, MPI_INTEGER, left, 1000 + it, MPI_COMM_WORLD, st, ierr)
    else
      call MPI_Recv(in, n, MPI_INTEGER, left, 1000 + it, MPI_COMM_WORLD, st, ierr)
      call MPI_Send(out, n, MPI_INTEGER, right, 1000 + it, MPI_COMM_WORLD, ierr)
    end if
    call check()
    deallocate(out, in)
  end do
  call MPI_Reduce(bad, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (bad /= 0) print '(a,i0,a,i0,a)', 'rank ', rank, ': ', bad, ' wrong elements'
  if (rank == 0 .and. total == 0) print '(a)', 'stack_ring_f: OK'
  call MPI_Finalize(ierr)
contains
  subroutine check()
    do i = 1, n
      if (in(i) /= left * 100003 + it * 1009 + i) bad = bad + 1
    end do
  end subroutine check
end program stack_ring
