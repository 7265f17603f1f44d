# bench/rma.cmake: the RMA benchmark (rma.c), a plain MPI program like the others here,
# started by bench/run under hmpirun with and without HMPI_DISABLE=1. Included from
# bench/CMakeLists.txt.
add_executable(bench_rma ${CMAKE_CURRENT_LIST_DIR}/rma.c)
target_link_libraries(bench_rma PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS} m)
set_target_properties(bench_rma PROPERTIES OUTPUT_NAME rma
  RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
