# The layers of gcnlab, each a static library that links only the layers below it.
#
# Includes are written from the repository root ("common/core/error.hpp"), so a
# plain -I<root> would let any file include any other. Instead each layer gets a
# view of its own folders only: build/layers/<layer>/<folder> is a link to the
# source folder, and the view is the layer's one PUBLIC include directory. A
# target sees the views of the layers it links (transitively: the layers below),
# so an include that runs up the layers fails to compile ("No such file"), as in
# Ginkgo, whose core and backends are separate libraries (tests/layers checks it).
#
#   gcnlab_layer(NAME FOLDERS folder... [SOURCES file...] [DEPENDS layer-or-target...] [PORTABLE])
#
# SOURCES default to the folders' *.cpp. DEPENDS are PUBLIC (the layers below and
# the packages whose headers this layer's headers include). PORTABLE: no
# -march (the app, whose reference loops in `bench` stay plain); the others
# compile for GCNLAB_ARCH (CMakeLists.txt: native, or a portable level such as
# x86-64-v3 for a binary that runs on another machine, scripts/bundle.sh).
function(gcnlab_layer name)
  cmake_parse_arguments(L "PORTABLE" "" "FOLDERS;SOURCES;DEPENDS" ${ARGN})
  set(view ${CMAKE_BINARY_DIR}/layers/${name})
  foreach(folder IN LISTS L_FOLDERS)
    get_filename_component(parent ${view}/${folder} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${folder} ${view}/${folder} SYMBOLIC)
    if(NOT L_SOURCES)
      file(GLOB found CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${folder}/*.cpp)
      list(APPEND sources ${found})
    endif()
  endforeach()
  if(L_SOURCES)
    set(sources ${L_SOURCES})
  endif()
  add_library(gcnlab_${name} STATIC ${sources})
  target_include_directories(gcnlab_${name} PUBLIC ${view})
  target_link_libraries(gcnlab_${name} PUBLIC ${L_DEPENDS})
  gcnlab_warnings(gcnlab_${name})
  # For tests/layers/check.sh: the folders and the include directories (its own
  # and those of the layers below) this layer's files compile with.
  file(GENERATE OUTPUT ${view}.folders CONTENT "${L_FOLDERS}\n")
  file(GENERATE OUTPUT ${view}.includes
       CONTENT "$<JOIN:$<TARGET_PROPERTY:gcnlab_${name},INCLUDE_DIRECTORIES>,\n>\n")
  if(NOT L_PORTABLE)  # Release kernels: let the compiler use the target's vector width.
    target_compile_options(gcnlab_${name} PRIVATE $<$<AND:$<CONFIG:Release>,$<COMPILE_LANGUAGE:CXX>>:-O3 -march=${GCNLAB_ARCH}>)
  endif()
endfunction()

function(gcnlab_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
endfunction()
