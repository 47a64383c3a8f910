// Every bound in TelosMUD, in one place. Each queue, buffer and table names its limit here and
// sheds or applies back-pressure when it is reached. Names carry their units.
#pragma once

#include <cstddef>
#include <cstdint>

namespace telos::limits {

// --- HTTP edge (admin server, API, WebSocket upgrade)
inline constexpr size_t kHttpHeaderBytesMax = 8 * 1024;
inline constexpr size_t kHttpBodyBytesMax = 64 * 1024;
inline constexpr int64_t kHttpHeaderTimeoutMs = 10'000;  // slow-header (slowloris) guard
inline constexpr int64_t kHttpIdleTimeoutMs = 30'000;    // keep-alive between requests
inline constexpr int64_t kHttpWriteTimeoutMs = 10'000;
inline constexpr size_t kHttpConnectionsMax = 1'024;

// --- Player input
inline constexpr size_t kInputLineBytesMax = 2'048;

// --- Zones
inline constexpr size_t kPlayersPerZoneMax = 5'000;
inline constexpr size_t kZoneInboxDepthMax = 16'384;
inline constexpr int64_t kZoneHeartbeatMs = 250;

// --- Outbound buffering per session before a slow client is shed
inline constexpr size_t kSessionPendingWriteBytesMax = 256 * 1024;

// --- Listening sockets
inline constexpr int kListenBacklog = 1'024;

// --- Configuration
inline constexpr size_t kConfigFileBytesMax = 1024 * 1024;

}  // namespace telos::limits
