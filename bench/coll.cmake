# The collectives benchmark (coll.c): a plain MPI program like pingpong, run by `run`
# under hmpirun with and without HMPI_DISABLE=1. Included from bench/CMakeLists.txt.
add_executable(coll ${CMAKE_CURRENT_LIST_DIR}/coll.c)
target_link_libraries(coll PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS})
set_target_properties(coll PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)

# Smoke test of the runner on it, once the runner's table knows "coll".
file(READ ${CMAKE_CURRENT_LIST_DIR}/run _coll_runner)
string(FIND "${_coll_runner}" "\"coll\":" _coll_known)
if(HMPI_BUILD_TESTS AND NOT _coll_known EQUAL -1)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_test(NAME bench.smoke.coll
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/smoke.py
              ${CMAKE_CURRENT_BINARY_DIR}/run coll)
    set_tests_properties(bench.smoke.coll PROPERTIES TIMEOUT 120 LABELS bench PROCESSORS 2)
  endif()
endif()
