#include "telos/base/assert.h"

#include <cstdio>
#include <cstdlib>

namespace telos::detail {

void AssertFail(const char* file, int line, const char* condition, std::string_view message) {
  std::fprintf(stderr, "%s:%d: assertion failed: %s%s%.*s\n", file, line, condition,
               message.empty() ? "" : ": ", static_cast<int>(message.size()), message.data());
  std::fflush(stderr);
  std::abort();
}

}  // namespace telos::detail
