# OPI, the Ownership Passing Interface (docs/opi.md): included by src/CMakeLists.txt.
list(APPEND HMPI_SOURCES opi/context.c opi/pool.c opi/known.c opi/give.c opi/take.c)
