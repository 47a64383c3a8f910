#include "telos/base/clock.h"

#include "telos/base/assert.h"

namespace telos {

void ManualClock::Advance(Duration d) {
  RELEASE_ASSERT(d.count() >= 0, "a ManualClock never runs backwards");
  now_ns_.fetch_add(d.count());
}

}  // namespace telos
