# bench/opbench.cmake: OPBench (opbench.c), ownership passing against copying, started
# by bench/run under hmpirun with and without HMPI_DISABLE=1 like the others. It calls
# OPI, so it links libhmpi (hmpirun preloads the same library). Included from
# bench/CMakeLists.txt.
add_executable(opbench ${CMAKE_CURRENT_LIST_DIR}/opbench.c)
target_link_libraries(opbench PRIVATE hmpi)
set_target_properties(opbench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)

# Smoke test: the runner end to end on tiny sizes.
if(HMPI_BUILD_TESTS)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_test(NAME bench.smoke.opbench
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/smoke.py
              ${CMAKE_CURRENT_BINARY_DIR}/run opbench)
    set_tests_properties(bench.smoke.opbench PROPERTIES TIMEOUT 180 LABELS bench PROCESSORS 2)
  endif()
endif()
