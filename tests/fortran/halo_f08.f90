! halo_f08.f90: the halo exchange of halo_mpi.f90 through `use mpi_f08`, with persistent
! requests (MPI_Recv_init/MPI_Send_init/MPI_Startall/MPI_Waitall) on a duplicated
! communicator; halos checked element by element, then a checksum with
! MPI_Allreduce(MPI_IN_PLACE).
program halo_f08
  use mpi_f08
  implicit none
  integer, parameter :: nx = 3000, ny = 8, steps = 30
  double precision, allocatable :: a(:,:)
  integer :: rank, nprocs, left, right, step, i, j, bad
  type(MPI_Comm) :: comm
  type(MPI_Request) :: reqs(4)
  type(MPI_Status) :: statuses(4)
  double precision :: sums(2), expect

  call MPI_Init()
  call MPI_Comm_dup(MPI_COMM_WORLD, comm)
  call MPI_Comm_rank(comm, rank)
  call MPI_Comm_size(comm, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)
  right = mod(rank + 1, nprocs)
  allocate(a(nx, 0:ny + 1))
  call MPI_Recv_init(a(:, 0), nx, MPI_DOUBLE_PRECISION, left, 1, comm, reqs(1))
  call MPI_Recv_init(a(:, ny + 1), nx, MPI_DOUBLE_PRECISION, right, 2, comm, reqs(2))
  call MPI_Send_init(a(:, ny), nx, MPI_DOUBLE_PRECISION, right, 1, comm, reqs(3))
  call MPI_Send_init(a(:, 1), nx, MPI_DOUBLE_PRECISION, left, 2, comm, reqs(4))
  bad = 0
  do step = 1, steps
    do j = 1, ny
      do i = 1, nx
        a(i, j) = v(rank, i, j, step)
      end do
    end do
    a(:, 0) = -1.0d0
    a(:, ny + 1) = -1.0d0
    call MPI_Startall(4, reqs)
    call MPI_Waitall(4, reqs, statuses)
    if (statuses(1)%MPI_SOURCE /= left .or. statuses(2)%MPI_SOURCE /= right) bad = bad + 1
    do i = 1, nx
      if (a(i, 0) /= v(left, i, ny, step)) bad = bad + 1
      if (a(i, ny + 1) /= v(right, i, 1, step)) bad = bad + 1
    end do
    sums(1) = sum(a(:, 0)) + sum(a(:, ny + 1))
    sums(2) = 1.0d0
    call MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE_PRECISION, MPI_SUM, comm)
    expect = 0.0d0
    do j = 0, nprocs - 1
      do i = 1, nx
        expect = expect + v(j, i, ny, step) + v(j, i, 1, step)
      end do
    end do
    if (sums(1) /= expect .or. sums(2) /= nprocs) bad = bad + 1
  end do
  do i = 1, 4
    call MPI_Request_free(reqs(i))
    if (reqs(i) /= MPI_REQUEST_NULL) bad = bad + 1
  end do
  if (bad /= 0) then
    print *, 'rank', rank, ': ', bad, ' errors'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  call MPI_Comm_free(comm)
  if (rank == 0) print '(a)', 'halo_f08: OK'
  deallocate(a)
  call MPI_Finalize()
contains
  pure double precision function v(r, i, j, step)
    integer, intent(in) :: r, i, j, step
    v = r * 1.0d7 + i * 1.0d3 + j + step * 1.0d1   ! integers: sums are exact
  end function v
end program halo_f08
