# Compiler settings shared by every target: ccache, warnings, sanitizers, assertion mode.

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()

# Flags for our own targets only (telos_add_library / telos_add_test apply them), so that
# third-party headers never fail the build.
set(TELOS_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor
    -Wno-missing-field-initializers)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(TELOS_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wshadow-uncaptured-local -Wnon-virtual-dtor
      -Wno-missing-field-initializers -Wno-gnu-zero-variadic-macro-arguments)
  # Lock discipline is checked, not commented (telos/base/thread_annotations.h): a guarded member
  # touched without its mutex, or a lock taken out of its declared order (the beta check), is an
  # error even where other warnings are not.
  list(APPEND TELOS_WARNING_FLAGS -Wthread-safety -Wthread-safety-beta -Werror=thread-safety)
  # Without this a PCH embeds a timestamp and ccache can never reuse objects built against it.
  add_compile_options("SHELL:-Xclang -fno-pch-timestamp")
endif()
if(TELOS_WERROR)
  list(APPEND TELOS_WARNING_FLAGS -Werror)
endif()

if(TELOS_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    # clang 14 cannot compile C++20 coroutines with -fsanitize=function (notes/deps.md).
    list(APPEND _san -fno-sanitize=function)
  endif()
  add_compile_options(${_san})
  add_link_options(${_san})
endif()

# RELEASE_ASSERT is always on; ASSERT only in debug builds (NDEBUG off).
