# bench/rma.cmake: the RMA benchmark (rma.c), a plain MPI program like the others here,
# started by bench/run under hmpirun with and without HMPI_DISABLE=1. Included from
# bench/CMakeLists.txt.
add_executable(bench_rma ${CMAKE_CURRENT_LIST_DIR}/rma.c)
target_link_libraries(bench_rma PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS} m)
set_target_properties(bench_rma PROPERTIES OUTPUT_NAME rma
  RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)

# Smoke test: the runner end to end on tiny sizes, once bench/run has its "rma" entry.
file(READ ${CMAKE_CURRENT_LIST_DIR}/run _rma_runner)
string(FIND "${_rma_runner}" "\"rma\":" _rma_listed)
if(HMPI_BUILD_TESTS AND NOT _rma_listed EQUAL -1)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_test(NAME bench.smoke.rma
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/smoke.py
              ${CMAKE_CURRENT_BINARY_DIR}/run rma)
    set_tests_properties(bench.smoke.rma PROPERTIES TIMEOUT 180 LABELS bench PROCESSORS 2)
  endif()
endif()
