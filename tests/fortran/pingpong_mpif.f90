! pingpong_mpif.f90: ping-pong between rank pairs (0-1, 2-3, ...) through mpif.h, with
! MPI_Send/MPI_Recv, MPI_Isend/MPI_Irecv/MPI_Waitall and MPI_Sendrecv, at sizes that
! take each of HMPI's protocols. Every element is checked; any error aborts the job.
program pingpong_mpif
  implicit none
  include 'mpif.h'
  integer, parameter :: nsizes = 4, iters = 20
  integer :: sizes(nsizes) = (/ 1, 100, 5000, 200000 /)
  double precision, allocatable :: sbuf(:), rbuf(:)
  integer :: rank, nprocs, peer, ierr, s, it, n, i, bad
  integer :: reqs(2), statuses(MPI_STATUS_SIZE, 2), status(MPI_STATUS_SIZE), cnt

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (mod(nprocs, 2) /= 0) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  peer = ieor(rank, 1)
  ! allocated after MPI_Init: from the shared heap under HMPI
  allocate(sbuf(sizes(nsizes)), rbuf(sizes(nsizes)))
  bad = 0
  do s = 1, nsizes
    n = sizes(s)
    do it = 1, iters
      do i = 1, n
        sbuf(i) = rank * 1.0d6 + i + it * 0.5d0
      end do
      rbuf(1:n) = -1.0d0
      ! blocking: the lower rank sends first
      if (rank < peer) then
        call MPI_Send(sbuf, n, MPI_DOUBLE_PRECISION, peer, it, MPI_COMM_WORLD, ierr)
        call MPI_Recv(rbuf, n, MPI_DOUBLE_PRECISION, peer, it, MPI_COMM_WORLD, status, ierr)
      else
        call MPI_Recv(rbuf, n, MPI_DOUBLE_PRECISION, peer, it, MPI_COMM_WORLD, status, ierr)
        call MPI_Send(sbuf, n, MPI_DOUBLE_PRECISION, peer, it, MPI_COMM_WORLD, ierr)
      end if
      call MPI_Get_count(status, MPI_DOUBLE_PRECISION, cnt, ierr)
      if (status(MPI_SOURCE) /= peer .or. status(MPI_TAG) /= it .or. cnt /= n) bad = bad + 1
      call check(rbuf, n, peer, it, bad)
      ! nonblocking
      rbuf(1:n) = -1.0d0
      call MPI_Irecv(rbuf, n, MPI_DOUBLE_PRECISION, peer, 1000 + it, MPI_COMM_WORLD, reqs(1), ierr)
      call MPI_Isend(sbuf, n, MPI_DOUBLE_PRECISION, peer, 1000 + it, MPI_COMM_WORLD, reqs(2), ierr)
      call MPI_Waitall(2, reqs, statuses, ierr)
      if (reqs(1) /= MPI_REQUEST_NULL .or. reqs(2) /= MPI_REQUEST_NULL) bad = bad + 1
      if (statuses(MPI_SOURCE, 1) /= peer .or. statuses(MPI_TAG, 1) /= 1000 + it) bad = bad + 1
      call check(rbuf, n, peer, it, bad)
      ! sendrecv, status ignored
      rbuf(1:n) = -1.0d0
      call MPI_Sendrecv(sbuf, n, MPI_DOUBLE_PRECISION, peer, 7, rbuf, n, MPI_DOUBLE_PRECISION, &
                        peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call check(rbuf, n, peer, it, bad)
    end do
  end do
  if (bad /= 0) then
    print *, 'rank', rank, ': ', bad, ' errors'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a)', 'pingpong_mpif: OK'
  deallocate(sbuf, rbuf)
  call MPI_Finalize(ierr)
contains
  subroutine check(buf, n, peer, it, bad)
    double precision, intent(in) :: buf(:)
    integer, intent(in) :: n, peer, it
    integer, intent(inout) :: bad
    integer :: i
    do i = 1, n
      if (buf(i) /= peer * 1.0d6 + i + it * 0.5d0) then
        bad = bad + 1
        return
      end if
    end do
  end subroutine check
end program pingpong_mpif
