# bench/coll.cmake: the collectives benchmark (coll.c), a plain MPI program like the
# others here, started by bench/run under hmpirun with and without HMPI_DISABLE=1.
# Included from bench/CMakeLists.txt.
add_executable(bench_coll ${CMAKE_CURRENT_LIST_DIR}/coll.c)
target_link_libraries(bench_coll PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS})
set_target_properties(bench_coll PROPERTIES OUTPUT_NAME coll
  RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
