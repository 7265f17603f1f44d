! isendrecv_mpi.f90: MPI 4's MPI_Isendrecv and MPI_Isendrecv_replace through `use mpi`
! around a ring, in one MPI_Waitall with a nonblocking broadcast (a request of the MPI
! below). Over Open MPI 5.0 its Fortran binding calls HMPI's PMPI_Isendrecv and then
! converts the request with PMPI_Request_c2f, which must be HMPI's too: Open MPI's own read
! HMPI's request as its object (docs/mpi-surface.md). Every element is checked.
program isendrecv_mpi
  use mpi
  implicit none
  integer, parameter :: n = 5000, steps = 10
  double precision, allocatable :: s(:), r(:), x(:)
  integer :: rank, nprocs, left, right, ierr, step, i, bad, b
  integer :: reqs(3)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  left = mod(rank - 1 + nprocs, nprocs)
  right = mod(rank + 1, nprocs)
  allocate(s(n), r(n), x(n))
  bad = 0
  do step = 1, steps
    do i = 1, n
      s(i) = v(rank, i, step)
      x(i) = v(rank, i, step + steps)
    end do
    r = -1.0d0
    b = 0
    if (rank == 0) b = step
    call MPI_Isendrecv(s, n, MPI_DOUBLE_PRECISION, right, step, r, n, MPI_DOUBLE_PRECISION, &
                       left, step, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isendrecv_replace(x, n, MPI_DOUBLE_PRECISION, left, 100 + step, right, &
                               100 + step, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Ibcast(b, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE, ierr)
    if (ierr /= MPI_SUCCESS .or. b /= step) bad = bad + 1
    do i = 1, n
      if (r(i) /= v(left, i, step)) bad = bad + 1
      if (x(i) /= v(right, i, step + steps)) bad = bad + 1
    end do
  end do
  if (bad /= 0) then
    print *, 'rank', rank, ': ', bad, ' errors'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  if (rank == 0) print '(a)', 'isendrecv_mpi: OK'
  deallocate(s, r, x)
  call MPI_Finalize(ierr)
contains
  pure double precision function v(r, i, step)
    integer, intent(in) :: r, i, step
    v = r * 1.0d7 + i * 1.0d2 + step
  end function v
end program isendrecv_mpi
