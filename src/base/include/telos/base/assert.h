// Assertions: the bug path. ASSERT is checked in debug builds only; RELEASE_ASSERT is always
// checked and is for places where continuing would corrupt state (a second writer, a ledger
// that does not balance). A failure prints file, line, condition and message to stderr and
// aborts, so a core dump or sanitizer report shows the stack.
#pragma once

#include <string_view>

namespace telos::detail {
[[noreturn]] void AssertFail(const char* file, int line, const char* condition,
                             std::string_view message);
}  // namespace telos::detail

#define RELEASE_ASSERT(cond, ...)                                                            \
  do {                                                                                       \
    if (!(cond)) [[unlikely]] {                                                              \
      ::telos::detail::AssertFail(__FILE__, __LINE__, #cond, std::string_view{__VA_ARGS__}); \
    }                                                                                        \
  } while (false)

#ifdef NDEBUG
#define ASSERT(cond, ...) \
  do {                    \
    (void)sizeof(cond);   \
  } while (false)
#else
#define ASSERT(cond, ...) RELEASE_ASSERT(cond, __VA_ARGS__)
#endif
