! halo_mpi.f90: halo exchange on a periodic 1-D decomposition through `use mpi`. Each
! rank owns columns 1..ny of a(nx, 0:ny+1) and swaps its edge columns with both
! neighbours every step (MPI_Irecv/MPI_Isend/MPI_Waitall); the halos are checked
! element by element, then a checksum with MPI_Allreduce(MPI_IN_PLACE).
program halo_mpi
  use mpi
  implicit none
  integer, parameter :: nx = 3000, ny = 8, steps = 30
  double precision, allocatable :: a(:,:)
  integer :: rank, nprocs, left, right, ierr, step, i, j, bad
  integer :: reqs(4)
  double precision :: sums(2), expect

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  left = mod(rank - 1 + nprocs, nprocs)
  right = mod(rank + 1, nprocs)
  allocate(a(nx, 0:ny + 1))
  bad = 0
  do step = 1, steps
    do j = 1, ny
      do i = 1, nx
        a(i, j) = v(rank, i, j, step)
      end do
    end do
    a(:, 0) = -1.0d0
    a(:, ny + 1) = -1.0d0
    call MPI_Irecv(a(:, 0), nx, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(a(:, ny + 1), nx, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Isend(a(:, ny), nx, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_Isend(a(:, 1), nx, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, reqs(4), ierr)
    call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE, ierr)
    do i = 1, nx
      if (a(i, 0) /= v(left, i, ny, step)) bad = bad + 1
      if (a(i, ny + 1) /= v(right, i, 1, step)) bad = bad + 1
    end do
    ! every rank's halo sum, added over all ranks, against the closed form
    sums(1) = sum(a(:, 0)) + sum(a(:, ny + 1))
    sums(2) = 1.0d0
    call MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    expect = 0.0d0
    do j = 0, nprocs - 1
      do i = 1, nx
        expect = expect + v(j, i, ny, step) + v(j, i, 1, step)
      end do
    end do
    if (sums(1) /= expect .or. sums(2) /= nprocs) bad = bad + 1
  end do
  if (bad /= 0) then
    print *, 'rank', rank, ': ', bad, ' errors'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  if (rank == 0) print '(a)', 'halo_mpi: OK'
  deallocate(a)
  call MPI_Finalize(ierr)
contains
  pure double precision function v(r, i, j, step)
    integer, intent(in) :: r, i, j, step
    v = r * 1.0d7 + i * 1.0d3 + j + step * 1.0d1   ! integers: sums are exact
  end function v
end program halo_mpi
