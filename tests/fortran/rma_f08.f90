! rma_f08.f90: one-sided communication through `use mpi_f08` on a ring: fence epochs
! (MPI_Put, MPI_Get) on an MPI_Win_allocate window, passive-target epochs (exclusive
! MPI_Win_lock + MPI_Accumulate on an MPI_Win_create window, MPI_Win_lock_all +
! MPI_Win_flush), post/start/complete/wait (and MPI_Win_test), and an
! MPI_Win_allocate_shared window read through MPI_Win_shared_query. Every element is
! checked; the program says "rma_f08: OK" only when all are right.
program rma_f08
  use mpi_f08
  use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
  implicit none
  integer, parameter :: n = 2000, dp = 8
  integer :: rank, nprocs, left, right, i, r, round, bad, srank, ssize, du
  type(MPI_Win) :: win, cwin, swin
  type(MPI_Comm) :: shm
  type(MPI_Group) :: wgroup, gleft, gright
  type(c_ptr) :: p, q
  double precision, pointer, asynchronous :: a(:), s(:), nb(:)
  double precision, allocatable, target, asynchronous :: c(:)
  double precision, target, asynchronous :: buf(n), got(n)
  integer(MPI_ADDRESS_KIND) :: sz, qsz
  integer(MPI_ADDRESS_KIND), parameter :: zero = 0
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)
  right = mod(rank + 1, nprocs)
  bad = 0
  sz = int(n, MPI_ADDRESS_KIND) * dp

  ! Fence epochs on an allocated window.
  call MPI_Win_allocate(sz, dp, MPI_INFO_NULL, MPI_COMM_WORLD, p, win)
  call c_f_pointer(p, a, [n])
  do round = 1, 3
    a = -1.0d0
    do i = 1, n
      buf(i) = v(rank, i, round)
    end do
    call MPI_Win_fence(0, win)
    call MPI_Put(buf, n, MPI_DOUBLE_PRECISION, right, zero, n, MPI_DOUBLE_PRECISION, win)
    call MPI_Win_fence(0, win)
    do i = 1, n
      if (a(i) /= v(left, i, round)) bad = bad + 1
    end do
    got = -1.0d0
    call MPI_Get(got, n, MPI_DOUBLE_PRECISION, right, zero, n, MPI_DOUBLE_PRECISION, win)
    call MPI_Win_fence(0, win)
    do i = 1, n
      if (got(i) /= v(rank, i, round)) bad = bad + 1
    end do
  end do
  call check('fence')

  ! Passive target: lock_all, put to the right, flush, get it back.
  call MPI_Win_lock_all(0, win)
  do i = 1, n
    buf(i) = v(rank, i, 7)
  end do
  call MPI_Put(buf, n, MPI_DOUBLE_PRECISION, right, zero, n, MPI_DOUBLE_PRECISION, win)
  call MPI_Win_flush(right, win)
  got = -1.0d0
  call MPI_Get(got, n, MPI_DOUBLE_PRECISION, right, zero, n, MPI_DOUBLE_PRECISION, win)
  call MPI_Win_flush_all(win)
  call MPI_Win_unlock_all(win)
  do i = 1, n
    if (got(i) /= v(rank, i, 7)) bad = bad + 1
  end do
  call check('lock_all')

  ! Passive target: every rank adds its values into every rank's created window, each
  ! under an exclusive lock.
  allocate(c(n))
  c = 0.0d0
  call MPI_Win_create(c, sz, dp, MPI_INFO_NULL, MPI_COMM_WORLD, cwin)
  do i = 1, n
    buf(i) = v(rank, i, 0)
  end do
  do r = 0, nprocs - 1
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, cwin)
    call MPI_Accumulate(buf, n, MPI_DOUBLE_PRECISION, r, zero, n, MPI_DOUBLE_PRECISION, &
                        MPI_SUM, cwin)
    call MPI_Win_unlock(r, cwin)
  end do
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, cwin)
  got = c
  call MPI_Win_unlock(rank, cwin)
  do i = 1, n
    if (got(i) /= sum([(v(r, i, 0), r = 0, nprocs - 1)])) bad = bad + 1
  end do
  call MPI_Win_free(cwin)
  if (cwin /= MPI_WIN_NULL) bad = bad + 1
  call check('lock')

  ! Generalized active target: exposed to the left, accessing the right.
  call MPI_Win_get_group(win, wgroup)
  call MPI_Group_incl(wgroup, 1, [left], gleft)
  call MPI_Group_incl(wgroup, 1, [right], gright)
  do round = 11, 12
    a = -1.0d0
    do i = 1, n
      buf(i) = v(rank, i, round)
    end do
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Win_post(gleft, 0, win)
    call MPI_Win_start(gright, 0, win)
    call MPI_Put(buf, n, MPI_DOUBLE_PRECISION, right, zero, n, MPI_DOUBLE_PRECISION, win)
    call MPI_Win_complete(win)
    if (round == 11) then
      call MPI_Win_wait(win)
    else
      flag = .false.
      do while (.not. flag)
        call MPI_Win_test(win, flag)
      end do
    end if
    do i = 1, n
      if (a(i) /= v(left, i, round)) bad = bad + 1
    end do
  end do
  call MPI_Group_free(gleft)
  call MPI_Group_free(gright)
  call MPI_Group_free(wgroup)
  call MPI_Win_free(win)
  call check('pscw')

  ! A shared window: read the next rank's segment through its own address.
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, shm)
  call MPI_Comm_rank(shm, srank)
  call MPI_Comm_size(shm, ssize)
  call MPI_Win_allocate_shared(sz, dp, MPI_INFO_NULL, shm, p, swin)
  call c_f_pointer(p, s, [n])
  do i = 1, n
    s(i) = v(rank, i, 20)
  end do
  call MPI_Win_fence(0, swin)
  r = mod(srank + 1, ssize)
  call MPI_Win_shared_query(swin, r, qsz, du, q)
  if (qsz /= sz .or. du /= dp) bad = bad + 1
  call c_f_pointer(q, nb, [n])
  do i = 1, n
    if (nb(i) /= v(rank - srank + r, i, 20)) bad = bad + 1
  end do
  call MPI_Win_fence(0, swin)
  call MPI_Win_free(swin)
  call MPI_Comm_free(shm)
  call check('shared')

  if (rank == 0) print '(a)', 'rma_f08: OK'
  call MPI_Finalize()
contains
  pure double precision function v(r, i, round)
    integer, intent(in) :: r, i, round
    v = r * 1.0d6 + i + round * 1.0d4   ! integers: sums are exact
  end function v

  subroutine check(what)
    character(*), intent(in) :: what
    if (bad /= 0) then
      print *, 'rank', rank, ': ', bad, ' errors in ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine check
end program rma_f08
