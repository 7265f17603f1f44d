! pingpong_f08.f90: the ping-pong of pingpong_mpif.f90 through `use mpi_f08`: handle
! types, optional ierror, MPI_STATUS_IGNORE, request arrays. Every element is checked.
program pingpong_f08
  use mpi_f08
  implicit none
  integer, parameter :: nsizes = 4, iters = 20
  integer :: sizes(nsizes) = [1, 100, 5000, 200000]
  double precision, allocatable :: sbuf(:), rbuf(:)
  integer :: rank, nprocs, peer, s, it, n, i, bad, cnt
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: status, statuses(2)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  if (mod(nprocs, 2) /= 0) call MPI_Abort(MPI_COMM_WORLD, 2)
  peer = ieor(rank, 1)
  allocate(sbuf(sizes(nsizes)), rbuf(sizes(nsizes)))
  bad = 0
  do s = 1, nsizes
    n = sizes(s)
    do it = 1, iters
      do i = 1, n
        sbuf(i) = rank * 1.0d6 + i + it * 0.25d0
      end do
      rbuf(1:n) = -1.0d0
      if (rank < peer) then
        call MPI_Send(sbuf, n, MPI_DOUBLE_PRECISION, peer, it, MPI_COMM_WORLD)
        call MPI_Recv(rbuf, n, MPI_DOUBLE_PRECISION, peer, it, MPI_COMM_WORLD, status)
      else
        call MPI_Recv(rbuf, n, MPI_DOUBLE_PRECISION, peer, it, MPI_COMM_WORLD, status)
        call MPI_Send(sbuf, n, MPI_DOUBLE_PRECISION, peer, it, MPI_COMM_WORLD)
      end if
      call MPI_Get_count(status, MPI_DOUBLE_PRECISION, cnt)
      if (status%MPI_SOURCE /= peer .or. status%MPI_TAG /= it .or. cnt /= n) bad = bad + 1
      call check(rbuf, n, peer, it, bad)
      rbuf(1:n) = -1.0d0
      call MPI_Irecv(rbuf, n, MPI_DOUBLE_PRECISION, peer, 1000 + it, MPI_COMM_WORLD, reqs(1))
      call MPI_Isend(sbuf, n, MPI_DOUBLE_PRECISION, peer, 1000 + it, MPI_COMM_WORLD, reqs(2))
      call MPI_Waitall(2, reqs, statuses)
      if (reqs(1) /= MPI_REQUEST_NULL .or. reqs(2) /= MPI_REQUEST_NULL) bad = bad + 1
      if (statuses(1)%MPI_SOURCE /= peer .or. statuses(1)%MPI_TAG /= 1000 + it) bad = bad + 1
      call check(rbuf, n, peer, it, bad)
      rbuf(1:n) = -1.0d0
      call MPI_Sendrecv(sbuf, n, MPI_DOUBLE_PRECISION, peer, 7, rbuf, n, MPI_DOUBLE_PRECISION, &
                        peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      call check(rbuf, n, peer, it, bad)
    end do
  end do
  if (bad /= 0) then
    print *, 'rank', rank, ': ', bad, ' errors'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a)', 'pingpong_f08: OK'
  deallocate(sbuf, rbuf)
  call MPI_Finalize()
contains
  subroutine check(buf, n, peer, it, bad)
    double precision, intent(in) :: buf(:)
    integer, intent(in) :: n, peer, it
    integer, intent(inout) :: bad
    integer :: i
    do i = 1, n
      if (buf(i) /= peer * 1.0d6 + i + it * 0.25d0) then
        bad = bad + 1
        return
      end if
    end do
  end subroutine check
end program pingpong_f08
