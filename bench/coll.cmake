# bench/coll.cmake: the collectives benchmark (coll.c), a plain MPI program like the
# others here, started by bench/run under hmpirun with and without HMPI_DISABLE=1.
# Included from bench/CMakeLists.txt.
add_executable(bench_coll ${CMAKE_CURRENT_LIST_DIR}/coll.c)
target_link_libraries(bench_coll PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS})
set_target_properties(bench_coll PROPERTIES OUTPUT_NAME coll
  RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)

# Smoke test: the runner end to end on tiny sizes, once the runner's table has "coll".
file(READ ${CMAKE_CURRENT_LIST_DIR}/run _coll_runner)
string(FIND "${_coll_runner}" "\"coll\":" _coll_known)
if(HMPI_BUILD_TESTS AND NOT _coll_known EQUAL -1)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_test(NAME bench.smoke.coll
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/smoke.py
              ${CMAKE_CURRENT_BINARY_DIR}/run coll)
    set_tests_properties(bench.smoke.coll PROPERTIES TIMEOUT 180 LABELS bench PROCESSORS 2)
  endif()
endif()
