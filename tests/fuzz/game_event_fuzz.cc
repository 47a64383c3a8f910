// libFuzzer target for the game-event codec (telos/store/game_events.h): whatever reaches the
// GAME_EVENTS stream — a broken publisher, anyone who may publish on game.event.> — is decoded
// by the leader director's tally. Besides "never crashes": an event that decodes is one the
// store would accept (its required fields non-empty and bounded, its sequence >= 1), and it
// survives an encode/decode round trip unchanged, so what the tally applies is what was sent.
//
// Run locally:  build/dev/tests/fuzz/game_event_fuzz tests/fuzz/corpus/game_event \
//                 -dict=tests/fuzz/dict/game_event.dict -max_total_time=600
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_checks.h"
#include "telos/base/limits.h"
#include "telos/store/game_events.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using telos::fuzz::Check;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto event = telos::store::DecodeGameEvent(bytes);
  if (!event.ok()) return 0;
  Check(!event->source.empty() && !event->kind.empty() && !event->subject.empty());
  Check(event->sequence >= 1);
  for (std::string_view field :
       {std::string_view(event->source), std::string_view(event->kind),
        std::string_view(event->subject), std::string_view(event->actor)}) {
    Check(field.size() <= telos::limits::kRecordFieldBytesMax);
  }
  auto again = telos::store::DecodeGameEvent(telos::store::EncodeGameEvent(*event));
  Check(again.ok());
  Check(again->source == event->source && again->sequence == event->sequence &&
        again->kind == event->kind && again->subject == event->subject &&
        again->actor == event->actor && again->at_ms == event->at_ms);
  (void)telos::store::GameEventSubject(event->kind, event->source);
  return 0;
}
