# bench/opbench.cmake: OPBench (opbench.c), ownership passing against copying, started
# by bench/run under hmpirun with and without HMPI_DISABLE=1 like the others. It calls
# OPI, so it links libhmpi (hmpirun preloads the same library). Included from
# bench/CMakeLists.txt.
add_executable(opbench ${CMAKE_CURRENT_LIST_DIR}/opbench.c)
target_link_libraries(opbench PRIVATE hmpi)
set_target_properties(opbench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
