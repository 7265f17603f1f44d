# Fails when the MPI_T tables of docs/observability.md differ from `hmpi_info --mpit`.
execute_process(COMMAND ${INFO} --mpit OUTPUT_VARIABLE tables RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "hmpi_info --mpit failed")
endif()
file(READ ${DOC} doc)
string(FIND "${doc}" "<!-- hmpi_info --mpit: begin -->\n${tables}<!-- hmpi_info --mpit: end -->" at)
if(at EQUAL -1)
  message(FATAL_ERROR "docs/observability.md is out of date: put the output of "
    "'hmpi_info --mpit' between its hmpi_info markers:\n${tables}")
endif()
