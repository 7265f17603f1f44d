! large_f08.f90: `use mpi_f08` with MPI 4's large-count kinds (MPICH only): the count
! of MPI_Send and MPI_Put as INTEGER(MPI_COUNT_KIND), the displacement unit of
! MPI_Win_allocate_shared and MPI_Win_shared_query as INTEGER(MPI_ADDRESS_KIND).
! MPICH binds these to MPI_Send_c, MPI_Put_c, MPI_Win_allocate_shared_c and
! MPI_Win_shared_query_c; each must reach HMPI (the receives are plain MPI_Recv and the
! window is read through the neighbour's segment). Every element checked.
program large_f08
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
  integer, parameter :: n = 3000
  integer(MPI_COUNT_KIND), parameter :: nc = n
  integer(MPI_ADDRESS_KIND), parameter :: du = 8
  integer :: rank, nprocs, right, left, i, bad, total, srank, ssize, r
  integer(MPI_ADDRESS_KIND) :: sz, qsz, qdu
  double precision :: out(n), in(n)
  double precision, pointer :: s(:), nb(:)
  type(c_ptr) :: p, q
  type(MPI_Win) :: win
  type(MPI_Comm) :: shm

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  bad = 0

  ! Large-count send, int receive.
  do i = 1, n
    out(i) = rank * 1d6 + i
  end do
  in = -1
  if (mod(rank, 2) == 0) then
    call MPI_Send(out, nc, MPI_DOUBLE_PRECISION, right, 7, MPI_COMM_WORLD)
    call MPI_Recv(in, n, MPI_DOUBLE_PRECISION, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  else
    call MPI_Recv(in, n, MPI_DOUBLE_PRECISION, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Send(out, nc, MPI_DOUBLE_PRECISION, right, 7, MPI_COMM_WORLD)
  end if
  do i = 1, n
    if (in(i) /= left * 1d6 + i) bad = bad + 1
  end do

  ! A shared window with a large-kind displacement unit; large-count puts into the
  ! right neighbour's segment, read back through MPI_Win_shared_query's pointer.
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, shm)
  call MPI_Comm_rank(shm, srank)
  call MPI_Comm_size(shm, ssize)
  sz = n * 8
  call MPI_Win_allocate_shared(sz, du, MPI_INFO_NULL, shm, p, win)
  call c_f_pointer(p, s, [n])
  s = -1
  r = mod(srank + 1, ssize)
  call MPI_Win_fence(0, win)
  call MPI_Put(out, nc, MPI_DOUBLE_PRECISION, r, 0_MPI_ADDRESS_KIND, nc, &
               MPI_DOUBLE_PRECISION, win)
  call MPI_Win_fence(0, win)
  call MPI_Win_shared_query(win, r, qsz, qdu, q)
  if (qsz /= sz .or. qdu /= du) bad = bad + 1
  call c_f_pointer(q, nb, [n])
  do i = 1, n
    if (nb(i) /= (rank - srank + mod(r + ssize - 1, ssize)) * 1d6 + i) bad = bad + 1
  end do
  call MPI_Win_fence(0, win)
  call MPI_Win_free(win)
  call MPI_Comm_free(shm)

  call MPI_Reduce(bad, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
  if (bad /= 0) print '(a,i0,a,i0,a)', 'rank ', rank, ': ', bad, ' wrong'
  if (rank == 0 .and. total == 0) print '(a)', 'large_f08: OK'
  call MPI_Finalize()
end program large_f08
