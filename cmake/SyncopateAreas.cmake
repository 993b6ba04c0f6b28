# syncopate_add_areas(): adds every subfolder of the current source folder that has a
# CMakeLists.txt, in name order: tests/ and bench/ hold one folder per part (tests/trace,
# bench/analyzer, ...), and each joins once it exists. The GUI's folder needs Qt, which a build
# without the GUI lacks.
function(syncopate_add_areas)
  file(GLOB areas LIST_DIRECTORIES true ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT areas)
  foreach(area IN LISTS areas)
    get_filename_component(area_name ${area} NAME)
    if(area_name STREQUAL "gui" AND NOT SYNCOPATE_BUILD_GUI)
      continue()
    endif()
    if(IS_DIRECTORY ${area} AND EXISTS ${area}/CMakeLists.txt)
      add_subdirectory(${area})
    endif()
  endforeach()
endfunction()
