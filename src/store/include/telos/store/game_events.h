// The wire form of a GameEvent (records_store.h) on a durable stream: a small JSON object
//   {"source":"world-1","sequence":7,"kind":"boss_kill","subject":"dungeon:lich",
//    "actor":"Aldric","at_ms":1764633600000}
// published on GameEventSubject(kind, source) with GameEventMsgId(event) as its deduplication
// id, so a publisher that repeats itself within the stream's window is stored once, and the
// consumer's watermark absorbs anything later.
//
// The subject names the source as its last token, so the broker can bind a source to the one
// publisher allowed to use it (deploy/nats/permissions.conf gives each world a user that may
// publish only under its own token), and the consumer refuses an event whose payload names
// another source than its subject (GameEventSubjectMatches): one world cannot speak for another
// and so cannot raise another's watermark.
//
// What a publisher must do, since the consumer's per-source watermark (records_store.h) drops
// every event at or below the last one applied: keep its sequence across restarts (persisted,
// never reset: a counter that starts again at 1 has all its later events dropped), and publish
// in sequence order, retrying event N until it is stored before publishing N+1 (an N published
// after N+1 is dropped).
#pragma once

#include <string>
#include <string_view>

#include "telos/base/status.h"
#include "telos/bus/durable.h"
#include "telos/store/records_store.h"

namespace telos::store {

// The stream every game event goes to, and the subjects it captures.
inline constexpr std::string_view kGameEventStream = "GAME_EVENTS";
inline constexpr std::string_view kGameEventSubjects = "game.event.>";

// The stream's spec: what the publishers and the consumer each ensure before they use it, the
// same on both sides so neither undoes the other's bounds.
bus::StreamSpec GameEventStreamSpec();

std::string EncodeGameEvent(const GameEvent& event);
// InvalidArgument naming what is wrong for anything that is not a well-formed event (the
// consumer rejects it as poisoned).
Result<GameEvent> DecodeGameEvent(std::string_view data);
// "game.event.<kind>.<source>", the kind and the source each made safe as one subject token
// (bus::SubjectToken: "world-1" is "world_2d1").
std::string GameEventSubject(std::string_view kind, std::string_view source);
// Whether `subject` is exactly GameEventSubject(event.kind, event.source): an event delivered
// on any other subject (another source's token, a kind that differs, the tokenless form of
// earlier releases) is not the publisher's to make.
bool GameEventSubjectMatches(std::string_view subject, const GameEvent& event);
// "<source>:<sequence>".
std::string GameEventMsgId(const GameEvent& event);

}  // namespace telos::store
