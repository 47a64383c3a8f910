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
inline constexpr int64_t kHttpWriteTimeoutMs = 10'000;
inline constexpr size_t kHttpConnectionsMax = 1'024;

// --- Player input
inline constexpr size_t kInputLineBytesMax = 2'048;
inline constexpr size_t kTelnetSubnegotiationBytesMax = 8 * 1024;  // GMCP payloads included
inline constexpr size_t kTerminalTypeBytesMax = 64;
inline constexpr size_t kGmcpPackageBytesMax = 64;

// --- Zones
inline constexpr size_t kPlayersPerZoneMax = 5'000;
inline constexpr size_t kZoneInboxDepthMax = 16'384;
inline constexpr int64_t kZoneHeartbeatMs = 250;
// Output for players who did not act (someone else's say, an arrival) waits at most this long,
// so a busy room costs each listener a few writes a second instead of one per line.
inline constexpr int64_t kOutputPulseMsDefault = 100;
inline constexpr int64_t kOutputPulseMsMax = 1'000;
// A zone whose last flush wrote to this many players or more skips its pulses: each player's
// waiting output goes out once a heartbeat (4 a second, Diku's pace), in a crowd each pulse being
// hundreds of writes. The players are flushed in this many slices spread over the heartbeat, so
// a crowd's writes do not all queue at once ahead of someone's reply.
inline constexpr size_t kOutputPulseCrowdPlayersDefault = 256;
inline constexpr size_t kCrowdFlushSlices = 5;
inline constexpr size_t kRoomPlayersListedMax = 20;  // a room's look names this many players
inline constexpr int64_t kCharacterSaveIntervalMs = 60'000;  // periodic save while playing

// --- Outbound buffering per session before a slow client is shed
inline constexpr size_t kSessionPendingWriteBytesMax = 256 * 1024;
inline constexpr int64_t kSessionWriteTimeoutMs = 10'000;
inline constexpr int64_t kSessionIdleTimeoutMs = 30 * 60 * 1000;  // no input for 30 minutes

// --- Telnet and WebSocket edges
inline constexpr size_t kTelnetConnectionsMax = 20'000;
inline constexpr size_t kTelnetConnectionsPerAddressMax = 32;
inline constexpr double kInputLinesPerSecond = 10.0;  // sustained, per session
inline constexpr double kInputLinesBurst = 30.0;      // typed ahead or pasted at once
inline constexpr size_t kWebSocketFrameBytesMax = 16 * 1024;
inline constexpr size_t kWebFileBytesMax = 4 * 1024 * 1024;  // one static file of the web client

// --- Telnet options (CHARSET, MTTS, MSDP): what one client's negotiation may make us hold
inline constexpr size_t kCharsetNamesMax = 16;       // character sets read from one REQUEST
inline constexpr size_t kCharsetNameBytesMax = 40;   // one character set name
inline constexpr size_t kTerminalTypeRoundsMax = 4;  // TTYPE SENDs per connection (MTTS: 3)
inline constexpr size_t kMsdpDepthMax = 4;           // nested tables and arrays in one value
inline constexpr size_t kMsdpItemsMax = 256;         // names and values in one message
inline constexpr size_t kMsdpReportedMax = 64;       // variables one client has reported
inline constexpr size_t kMsdpValueBytesMax = 256;    // a client-set variable (CLIENT_NAME)
inline constexpr size_t kWordWrapColumnsMin = 20;    // a narrower NAWS width is not wrapped to

// --- GMCP (Core.Supports, Room.Players, Char.Items): what a client makes us hold, what we list
inline constexpr size_t kGmcpModulesMax = 64;                    // Core.Supports modules held
inline constexpr size_t kGmcpRememberedBodyBytesMax = 4 * 1024;  // a state package replayed
inline constexpr size_t kGmcpRoomPlayersMax = 50;                // names in one Room.Players

// --- Logins
inline constexpr size_t kThrottledAddressesMax = 100'000;
inline constexpr size_t kLoginFailuresPerAddressMax = 10;  // within the window below
inline constexpr int64_t kLoginFailureWindowMs = 5 * 60 * 1000;
inline constexpr int64_t kLoginFailuresBeforeAccountLock = 5;
inline constexpr int64_t kAccountLockBaseMs = 60 * 1000;  // doubles per further failure
inline constexpr int64_t kAccountLockMaxMs = 15 * 60 * 1000;
inline constexpr int64_t kLoginTimeoutMs = 3 * 60 * 1000;  // to finish logging in
inline constexpr int64_t kLinkDeadMs = 3 * 60 * 1000;      // a dropped player stays in the world

// --- Logins: what creations, strangers and a flood may cost (src/account, AccountService).
// The lock above (kLoginFailuresBeforeAccountLock, kAccountLockBaseMs, kAccountLockMaxMs) counts
// failures per (account, address) pair, so a stranger's guesses lock only the stranger's address.
inline constexpr size_t kAccountCreationsPerAddressMax = 3;  // within the window below
inline constexpr int64_t kAccountCreationPerAddressWindowMs = 60 * 60 * 1000;
inline constexpr size_t kAccountCreationsMax = 30;  // from every address, within the window below
inline constexpr int64_t kAccountCreationWindowMs = 60 * 1000;
// Failed logins of one account from addresses that never logged into it, within the window
// below; past it only the account's known addresses may try.
inline constexpr size_t kAccountFailuresFromStrangersMax = 50;
inline constexpr int64_t kAccountFailureWindowMs = 15 * 60 * 1000;
// A pair's consecutive failures start afresh after this long without one.
inline constexpr int64_t kLoginFailuresForgottenAfterMs = 30 * 60 * 1000;
inline constexpr size_t kLockoutPairsMax = 100'000;        // (account, address) pairs remembered
inline constexpr size_t kLockoutAccountsMax = 100'000;     // accounts whose failures are counted
inline constexpr size_t kKnownAddressesPerAccountMax = 8;  // recent successful login addresses
// argon2id admission: hashes running at once, the share new accounts may take (the rest is
// kept for logins), and how many of each may wait for a slot before "busy" is answered at once.
inline constexpr size_t kPasswordHashesInFlightMax = 4;
inline constexpr size_t kCreationHashesInFlightMax = 1;
inline constexpr size_t kCreationHashWaitersMax = 1;
inline constexpr size_t kLoginHashWaitersMax = 8;

// --- Listening sockets
inline constexpr int kListenBacklog = 1'024;

// --- Configuration
inline constexpr size_t kConfigFileBytesMax = 1024 * 1024;

// --- Secrets and backing-service credentials (Config::Secret, src/redis, src/bus)
// A NAME_FILE secret: a token, a password, a URL or a NATS creds file (JWT plus seed, ~1 KB).
inline constexpr size_t kSecretFileBytesMax = 64 * 1024;

// --- World engine (src/world)
inline constexpr size_t kPackFilesMax = 2'048;            // files in one content pack
inline constexpr size_t kPackFileBytesMax = 1024 * 1024;  // one zone file or script
inline constexpr size_t kPackProblemsMax = 500;           // reported before giving up
inline constexpr size_t kLuaMemoryBytesPerVmMax = 16 * 1024 * 1024;
inline constexpr int64_t kLuaInstructionsPerCallMax = 200'000;
inline constexpr size_t kLuaFlagsPerZoneMax = 1'024;  // telos.set_flag keys
inline constexpr size_t kLuaFlagBytesMax = 1'024;     // one flag value
inline constexpr size_t kInventoryItemsMax = 100;     // carried, per character
inline constexpr size_t kItemsPerRoomMax = 200;
inline constexpr size_t kAliasesPerCharacterMax = 50;
inline constexpr size_t kAliasBytesMax = 256;
inline constexpr size_t kOutputLinesPerFlushMax = 400;  // per player; the rest is shed
inline constexpr size_t kRouteHopsMax = 4;              // re-forwards of one command
inline constexpr size_t kMailBodyBytesMax = 4'096;
inline constexpr size_t kCharacterStateBytesMax = 256 * 1024;  // serialized character JSON

// --- Lua work charged against a call's instruction budget (src/world/lua_vm.cc)
// Work a script makes C code do is paid in instructions, so no single call can do more than
// about its budget's worth of work whatever it calls. Per instruction: bytes allocated, copied
// or scanned; pattern-matcher steps; string.rep copies (even empty ones).
inline constexpr size_t kLuaBytesPerInstruction = 32;
inline constexpr int64_t kLuaPatternStepsPerInstruction = 4;
inline constexpr int64_t kLuaCopiesPerInstruction = 8;
// No single allocation in a VM may exceed this: it bounds the longest string (and so the work
// of one comparison or copy), the largest table part and the Lua stack.
inline constexpr size_t kLuaBlockBytesMax = 1024 * 1024;
inline constexpr int kLuaPatternDepthMax = 200;  // nested pattern items (recursion)
// A backstop behind the budget: a call still running after this long is stopped (the zone's
// clock, read at each count hook). A call within its budget takes a few milliseconds.
inline constexpr int64_t kLuaCallTimeMsMax = 50;

// --- Placement (public instances of a busy map)
inline constexpr size_t kInstancesPerMapMax = 256;  // candidates a placement or fleet considers
inline constexpr size_t kPlacementMemoryPlayersDefault = 10'000;  // decisions kept per map
inline constexpr size_t kPlacementMemoryPlayersMax = 1'000'000;
inline constexpr size_t kFleetArrivalsTrackedMax = 8'192;  // arrival instants kept for the rate
inline constexpr size_t kPlacementWeightsFileBytesMax = 64 * 1024;
inline constexpr int64_t kPlacementWeightPointsAbsMax = 1'000'000;

// --- Persistence (src/store). kMailBodyBytesMax and kCharacterStateBytesMax are above.
inline constexpr size_t kCharacterNameBytesMax = 24;
inline constexpr size_t kAccountNameBytesMax = 32;
inline constexpr size_t kPasswordHashBytesMax = 512;  // an encoded argon2id string
inline constexpr size_t kZoneIdBytesMax = 64;
inline constexpr size_t kRoomIdBytesMax = 128;
inline constexpr size_t kCharactersPerAccountMax = 10;
inline constexpr size_t kMailSenderBytesMax = 32;
inline constexpr size_t kMailSubjectBytesMax = 80;
// `mail send` makes the subject from the letter's first bytes, cut on a character boundary.
inline constexpr size_t kMailSubjectFromBodyBytes = 40;
static_assert(kMailSubjectFromBodyBytes <= kMailSubjectBytesMax);
inline constexpr size_t kMailboxMessagesMax = 200;  // per recipient; a full box refuses mail
// A game event's source, kind, subject, actor and its consumer's name (RecordsStore).
inline constexpr size_t kRecordFieldBytesMax = 128;
inline constexpr int64_t kSqliteBusyTimeoutMs = 5'000;
inline constexpr size_t kSaverPendingCharactersMax = 16'384;  // distinct characters queued
inline constexpr int64_t kSaverRetryBackoffInitialMs = 100;   // after the store was unavailable
inline constexpr int64_t kSaverRetryBackoffMaxMs = 5'000;
inline constexpr int64_t kSaverStopFlushDeadlineMs = 10'000;  // Stop() gives up after this

// --- Background writers on the coalescing writer (telos/base/coalescing_writer.h). Each queue
// holds at most one operation per key, so its bound counts keys (players, characters); a new
// key past the bound is refused and counted, a key already queued still coalesces.
// Placement records (src/shard/placement_writer): one per player resident on the shard.
// A write is given up (and logged) after its attempts; the pause between two is fixed.
inline constexpr size_t kPlacementWriterPlayersMax = 65'536;
inline constexpr int kPlacementWriteAttemptsMax = 20;
inline constexpr int64_t kPlacementWriteRetryBackoffMs = 250;
// Character checkpoints (src/shard/checkpoint_writer): a refused one is covered by the next.
inline constexpr size_t kCheckpointWriterCharactersMax = 16'384;
inline constexpr int kCheckpointWriteAttemptsMax = 20;
inline constexpr int64_t kCheckpointWriteRetryBackoffMs = 250;
// What the placement and checkpoint writers' Stop() gives the queue before it stops anyway.
inline constexpr int64_t kWriterStopFlushMsDefault = 2'000;

// --- A shard's gRPC Play streams (src/shard/play_stream)
inline constexpr size_t kPlayStreamPendingOutputsMax = 65'536;  // Outputs in one pending frame
// Half the gRPC message limit (rpc::kMessageBytesMax), leaving room for framing.
inline constexpr size_t kPlayStreamPendingBytesMax = 2 * 1024 * 1024;
// Outputs kept per link-dead or arriving session until it binds; the oldest go first.
inline constexpr size_t kPlayStreamBufferedOutputsMax = 512;
// An in-process Play stream (telos serve) carries every player of the process and has no message
// size to respect: its pending frame is bounded for memory alone. Each connection's own bound
// (kSessionPendingWriteBytesMax) applies after it.
inline constexpr size_t kInProcessPlayPendingOutputsMax = 1'048'576;
inline constexpr size_t kInProcessPlayPendingBytesMax = 64 * 1024 * 1024;

// --- A gate's link to the fleet of worlds (src/gate/fleet_world_link)
inline constexpr size_t kFleetLinkQueuedLinesMax = 32;  // input held while between shards
inline constexpr int kFleetLinkReroutesMax = 4;  // "your zone is elsewhere" followed in a row
// Names whose last placement read is remembered for routing without Redis; past it the memory
// is forgotten wholesale.
inline constexpr size_t kFleetLinkLastResidentNamesMax = 100'000;

// --- Message bus (src/bus)
// A subject, wildcards and all. Subjects built from SubjectToken() grow up to three bytes per
// input byte, so keep the text that goes into them short.
inline constexpr size_t kBusSubjectBytesMax = 512;
// One payload; NATS servers refuse more than their max_payload (1 MiB by default).
inline constexpr size_t kBusMessageBytesMax = 1024 * 1024;
inline constexpr size_t kBusPendingRequestsMax = 65'536;  // requests of one bus awaiting answers
inline constexpr int64_t kBusRequestTimeoutMsMax = 24 * 3'600'000;  // timeouts are clamped to it

// --- Durable streams (src/bus/durable.h and its backends)
inline constexpr size_t kDurableNameBytesMax = 64;    // a stream or durable consumer name
inline constexpr size_t kDurableMsgIdBytesMax = 128;  // a publish's deduplication id
// Distinct subjects the catch-up instruments label (DeliveryMetrics): publishers choose the
// subject, so past this many the rest share the label "other" and a series count stays bounded.
inline constexpr size_t kDurableCatchupSubjectLabelsMax = 32;
// How long one JetStream call (publish ack, stream or consumer admin) may wait for the server.
inline constexpr int64_t kDurableCallTimeoutMsMax = 5'000;
// Deliveries queued per in-process subscription (InProcessBusOptions' default).
inline constexpr size_t kInProcessBusDeliveryQueueDepthMaxDefault = 65'536;

// --- Directory (src/directory)
inline constexpr int64_t kDirectoryTtlMsMax = 24 * 3'600'000;  // any lease or record TTL
inline constexpr int64_t kDirectoryReservationAmountMax = 1'000'000;
inline constexpr size_t kDirectoryIdBytesMax = 256;  // player, zone, shard and gate ids
inline constexpr size_t kDirectoryZonesPerOccupancyReportMax = 4'096;

// --- Persistence, zone fences and write history (src/store)
// The longest shard id the store records (writer_shard, the shard of a zone fence): the same
// bound as the directory's ids.
inline constexpr size_t kStoreShardIdBytesMax = kDirectoryIdBytesMax;
inline constexpr size_t kZoneWritesListMax = 10'000;  // entries one ListZoneWrites returns

// --- Signed documents and keys (src/auth)
// A signed document larger than this is refused before it is verified or parsed.
inline constexpr size_t kSignedBlobBytesMax = 1024 * 1024;
// A key file is one line of 64 hex digits; anything much larger is not a key file.
inline constexpr size_t kKeyFileBytesMax = 4 * 1024;
// A verified document's fields must still meet these before they are used: a bug on the
// signer's side must not become a huge allocation or a nonsense name on ours. A name-like
// field: character, zone, nonce, shard and gate ids, token, reply address.
inline constexpr size_t kSignedDocumentFieldBytesMax = 256;
inline constexpr size_t kSnapshotArrivalLineBytesMax = 16 * 1024;  // one line of a frozen arrival
// The nested assertion is a small SignedBlob (a name, a nonce, two integers and a signature).
inline constexpr size_t kSnapshotAssertionBytesMax = 4 * 1024;

// --- World host (src/world/world_host)
// A character can change zone (walk, die and respawn) between the roster lookup and the
// freeze; the freeze then misses and is tried again where the roster now says it is.
inline constexpr int kRemovePlayerAttemptsMax = 4;

// --- Placement configuration (src/placement)
// No fleet timer exceeds a day.
inline constexpr int64_t kFleetDurationMsMax = 24LL * 60 * 60 * 1000;
// Social counts beyond this would let guild or friends terms dwarf everything else by data entry.
inline constexpr int64_t kPlacementSocialCountCapMax = 100;

// --- Director (src/director): the rebalance planner's inputs and settings
// One plan considers at most this many live shards, zones, colocation groups and in-flight
// moves; a bigger input is refused rather than planned slowly on the leader's thread.
inline constexpr size_t kDirectorShardsMax = 1'024;
inline constexpr size_t kDirectorZonesMax = 65'536;
inline constexpr size_t kDirectorColocationGroupsMax = 4'096;
inline constexpr size_t kDirectorZonesPerColocationGroupMax = 64;
inline constexpr int64_t kDirectorMovesInFlightMax = 64;  // rebalance drains at once, fleet-wide
inline constexpr int64_t kDirectorMarginPlayersMax = 1'000'000;
inline constexpr int64_t kDirectorZoneCooldownMsMax = 24LL * 60 * 60 * 1000;
inline constexpr int64_t kDirectorZonePlayersMax = 1'000'000;  // one zone's reported occupancy

// --- Director runtime (src/director): the drain-target exchange and the director loop
// One drain-targets request names at most a shard's occupancy report of zones; a bigger one is
// refused whole rather than answered in part.
inline constexpr size_t kDirectorDrainZonesPerRequestMax = kDirectoryZonesPerOccupancyReportMax;
// An error reply's text is cut to this many bytes: it is for logs, not a channel for data.
inline constexpr size_t kDirectorErrorTextBytesMax = 1'024;
// A drain-targets request or reply on the bus; anything larger is malformed.
inline constexpr size_t kDirectorDrainMessageBytesMax = kBusMessageBytesMax;
// A plan reads the cooldown of each zone it would move and plans again when one is cooling;
// after this many rounds the moves of unread zones are dropped until the next plan.
inline constexpr int kDirectorPlanRoundsMax = 8;

// --- Shard drains and the directive executor (src/shard/shard_drain, directive_executor)
// A SIGTERM drain ends within the outer deadline; each zone's hand-over within its own, so one
// stuck zone cannot eat the whole budget (and a rebalance drain of one zone is bounded alike).
inline constexpr int64_t kShardDrainDeadlineMs = 45'000;
inline constexpr int64_t kShardDrainZoneDeadlineMs = 30'000;
static_assert(kShardDrainZoneDeadlineMs < kShardDrainDeadlineMs, "a zone's deadline is inside");
// How long after a player lands the target's occupancy report shows them (one report interval
// of the target, with room): a drain's reservation lasts the drain deadline plus this.
inline constexpr int64_t kShardDrainPresenceReflectMs = 15'000;
inline constexpr int64_t kShardDrainReservationTtlMs =
    kShardDrainDeadlineMs + kShardDrainPresenceReflectMs;
// A draining shard waits this long for the leader director to name targets, then picks alone
// (balancing is an optimizer, never a dependency).
inline constexpr int64_t kShardDrainDirectorAnswerMs = 1'000;
// How often a world shard looks for rebalance directives addressed to it.
inline constexpr int64_t kDirectivePollMs = 1'000;

// --- Director drain-target answers (src/director/director.cc): what one drainer may ask for
// A request's ttl_ms is clamped to this: a drain's reservation has to outlast the drain (the
// outer deadline plus one presence-reflect window, kShardDrainReservationTtlMs) and no more.
inline constexpr int64_t kDirectorDrainReservationTtlMsMax = kShardDrainReservationTtlMs;
// One zone's players about to move are at most a full zone.
inline constexpr int64_t kDirectorDrainZoneAmountMax = static_cast<int64_t>(kPlayersPerZoneMax);
// What the director reserves for one drainer while its earlier grants are live: players in all
// and zones placed. Past either, further zones get no target from the director.
inline constexpr int64_t kDirectorDrainerReservedPlayersMax = 100'000;
inline constexpr size_t kDirectorDrainerZonesMax = kDirectorDrainZonesPerRequestMax;

// --- Load generator (src/sim)
inline constexpr int64_t kSwarmBotsMax = 20'000;
inline constexpr double kSwarmDurationSecondsMax = 3'600;
inline constexpr double kSwarmRampPerSecondMin = 0.1;
inline constexpr double kSwarmRampPerSecondMax = 10'000;
inline constexpr int64_t kSwarmThinkMsMin = 100;
inline constexpr int64_t kSwarmSpreadStepsMax = 1'000;
inline constexpr size_t kSwarmTargetsMax = 64;
inline constexpr size_t kRttSamplesMax = 4'000'000;     // a reservoir keeps a fair sample beyond
inline constexpr int64_t kSwarmQuitTimeoutMs = 15'000;  // for every bot to quit at the end
inline constexpr int kMixWeightMax = 1000;              // one behaviour's weight in a mix
inline constexpr size_t kBotTextBytesMax = 64 * 1024;   // unconsumed text kept per bot
inline constexpr int kBotQuitAttemptsMax = 20;
// A page the load generator fetches (a metrics scrape, a status page).
inline constexpr size_t kHttpGetBodyBytesMax = 16 * 1024 * 1024;
inline constexpr size_t kBotWebSocketFrameBytesMax = 1024 * 1024;  // the web client's own bound

// --- Login tickets and assertion lifetimes (src/account, src/gate, src/shard; issue 23 items 2
// and 3). A login ticket is the account service's proof that a player authenticated through it:
// Authenticate and CreateAccount hand one out, and every call that names an account's
// characters takes the account from it. It lives kLoginTicketIdleMs from its last use (a
// claim or a renewal), so an idle login screen loses it and a playing session, which renews
// every half assertion lifetime, keeps it.
inline constexpr int64_t kLoginTicketIdleMs = 10 * 60 * 1000;
// Tickets held at once by one account service (logins in progress and sessions playing); past
// it the least recently used is forgotten, and its session can no longer renew.
inline constexpr size_t kLoginTicketsMax = 200'000;
inline constexpr size_t kLoginTicketRandomBytes = 32;
inline constexpr size_t kLoginTicketBytesMax = 2 * kLoginTicketRandomBytes;  // hex on the wire
// A login assertion is a bearer token for one character through one gate: it is short-lived and
// the gate renews it while the session lives (TELOS_ASSERTION_TTL_MS within these bounds).
inline constexpr int64_t kAssertionTtlMsDefault = 5 * 60 * 1000;
inline constexpr int64_t kAssertionTtlMsMin = 60 * 1000;
inline constexpr int64_t kAssertionTtlMsMax = 15 * 60 * 1000;
// How often a gate looks for assertions past half their lifetime (and retries failed renewals).
inline constexpr int64_t kAssertionRenewSweepMs = 10 * 1000;
static_assert(kLoginTicketIdleMs > kAssertionTtlMsMax / 2 + 2 * kAssertionRenewSweepMs,
              "a renewing session must use its ticket before the ticket lapses");
static_assert(kAssertionRenewSweepMs * 2 < kAssertionTtlMsMin / 2,
              "a failed renewal must be retried before the assertion lapses");

// --- HTTP routes that block (HttpServer::HandleBlocking: /api/cluster reads Redis)
// Requests of such routes running on the blocking pool at once, per server; more get 503 "busy"
// at once, so a scraper hammering the admin port cannot take the pool from logins and saves.
inline constexpr size_t kHttpBlockingRequestsMax = 4;

// --- Races, classes, skills and spells (src/world; issue 32)
// Skills one saved character may know: a pack defines a few dozen; a state claiming more is
// refused at decode rather than grown into every zone that admits it.
inline constexpr size_t kCharacterSkillsMax = 256;
// Mobs one skill use may summon into a zone at once, counted over the whole zone; past it the
// summon fizzles, so a player cannot fill a zone with summoned mobs.
inline constexpr size_t kSummonedMobsPerZoneMax = 16;
// A fighting mob with spells tries one in this many combat rounds (deterministic via Random).
inline constexpr int kMobCastOneInRounds = 3;
// Quests one saved character may hold (taken and done), and steps one quest may have: a
// state claiming more is refused at decode; a quest with more steps at load.
inline constexpr size_t kCharacterQuestsMax = 512;
inline constexpr size_t kQuestStepsMax = 16;
// Quests a player may have taken and not finished at once.
inline constexpr size_t kActiveQuestsMax = 10;

// --- Skill waits and summons (src/world; review fixes)
// The longest lag and cooldown game.toml may give a skill. A saved wait is also clamped to these
// on admission, so a state from a skewed clock or a changed pack never locks a skill for longer.
inline constexpr int64_t kSkillLagMsMax = 60'000;
inline constexpr int64_t kSkillCooldownMsMax = 3'600'000;
// How long a summoned mob stays before it fades, and how many one summoner may have at once
// (kSummonedMobsPerZoneMax still bounds the zone): a summon is a helper for a fight, not a
// standing army, and it dies with its summoner's presence in the zone.
inline constexpr int64_t kSummonLifetimeMs = 3 * 60 * 1000;
inline constexpr size_t kSummonsPerOwnerMax = 2;

// --- Content hot reload (src/world/world_host Reload, src/shard/pack_reload; issue 25 item 6)
// Lines one player may type while their zone is rebuilt; they are applied once the player is
// back, and more are dropped with a log line (a rebuild takes one trip through two executors).
inline constexpr size_t kReloadHeldLinesMax = 32;
// How long the reload's coordinator waits for each world's answer: the check (the world reads
// and validates the pack from its disk) and the apply (every changed zone rebuilt).
inline constexpr int64_t kReloadCheckTimeoutMs = 20'000;
inline constexpr int64_t kReloadApplyTimeoutMs = 30'000;
// Worlds one reload asks; more live shards than this and the reload is refused.
inline constexpr size_t kReloadShardsMax = 256;
// Times the coordinator lists the live worlds again after an apply round, to apply the new
// pack to worlds that joined meanwhile (on the old pack) before it records the new pack alone;
// worlds still joining after the last round leave the fleet recorded as mid-reload.
inline constexpr size_t kReloadJoinRoundsMax = 3;
// Entries of one list in a reload answer (a world's pack problems, the zones it rebuilt) that
// a coordinator decodes; the rest is dropped.
inline constexpr size_t kReloadListMax = 1000;

// --- Telemetry (src/telemetry): the OTLP export's bounds on the standard OTEL_* variables.
// Faster than every 100 ms a process would spend its time serialising its metrics.
inline constexpr int64_t kOtlpExportIntervalMsMin = 100;
inline constexpr int64_t kOtlpExportIntervalMsMax = 24 * 3'600'000;
inline constexpr int64_t kOtlpExportIntervalMsDefault = 60'000;  // the OTel default
inline constexpr int64_t kOtlpExportTimeoutMsDefault = 30'000;   // the OTel default
inline constexpr int64_t kOtlpRequestTimeoutMsDefault = 10'000;  // the OTel default
inline constexpr int64_t kOtlpRequestTimeoutMsMax = 600'000;
// OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS: entries in one variable.
inline constexpr size_t kOtlpListEntriesMax = 64;

// --- Staff commands and the audit trail (issue 30; src/world/commands/staff.cc, src/store,
// apps/telos). A mute always has an expiry.
inline constexpr int64_t kStaffMuteMinutesMax = 30LL * 24 * 60;  // a month
// A reason given with a kick or mute: shown to the player and kept in the audit row.
inline constexpr size_t kStaffReasonBytesMax = 200;
// An audit row's free-text detail (the reason and the outcome).
inline constexpr size_t kAuditDetailBytesMax = 512;
// Rows `telos ctl audit` prints at most per call (newest first).
inline constexpr size_t kAuditListMax = 1000;
// Audit rows a world's StoreAuditPort has handed to the blocking pool and not yet stored. Past
// it a row is shed (counted in audit_rows_shed_total, and still in the log line the host wrote):
// with PostgreSQL slow, an unbounded queue would grow with every staff action until memory ran
// out, and the log line already keeps the trail.
inline constexpr size_t kAuditPendingMax = 1024;
// A staff order that travels to another world carries its issuer's signed login assertion,
// checked there (fleet_comms.cc). Its size is bounded before the signature is checked, like
// every other signed document a world reads from the network.
inline constexpr size_t kStaffAssertionBytesMax = 4096;
// How long past its expiry the target's world still accepts the issuer's assertion on a staff
// order. A world is handed an assertion when the character attaches and is never sent the
// gate's renewals, so an admin's assertion lapses minutes into a session; the signature still
// proves that the account service made this character staff, and this bound says how old that
// proof may be (an admin playing longer re-attaches, e.g. by logging in again, to refresh it).
// A world that once hosted the admin can replay it until then: the threat model accepts it.
inline constexpr int64_t kStaffAssertionStaleMsMax = 12LL * 3600 * 1000;
// Clock difference between worlds tolerated when the target's world checks a mute's expiry
// against kStaffMuteMinutesMax (the issuer computes the instant on its own clock).
inline constexpr int64_t kStaffClockSkewMsMax = 60'000;
// --- Social layer: parties, guilds, friends, locale (src/world party, src/store guilds;
// issue 26 item 1)
// Members of one party, the leader included: a party's chat costs one message per member, and
// a party is a group that walks and fights together, not a guild.
inline constexpr size_t kPartyMembersMax = 6;
// Invitations the leader may have outstanding at once (each one is a member to be).
inline constexpr size_t kPartyInvitesMax = kPartyMembersMax;
// How long an invitation can be accepted: the invitee is asked now, not next week.
inline constexpr int64_t kPartyInviteTtlMs = 120'000;
// Members of one guild, founder included.
inline constexpr size_t kGuildMembersMax = 500;
// A guild's name, in bytes (letters, digits, spaces, apostrophes and hyphens).
inline constexpr size_t kGuildNameBytesMin = 3;
inline constexpr size_t kGuildNameBytesMax = 32;
// Players one character may keep on its friends list.
inline constexpr size_t kFriendsMax = 100;

// --- Arcade (src/arcade; issue 27): the chip ledger, group commit, provable fairness, rounds.
// An idempotency key is chosen by the client ("bet:<player>:<uuid>"); longer keys are refused
// rather than truncated, since a truncated key could collide with another client's.
inline constexpr size_t kArcadeIdempotencyKeyBytesMax = 128;
// "player:<name>", "escrow:<game>:<round>", "house": bounded so a row stays small.
inline constexpr size_t kArcadeAccountNameBytesMax = 96;
// Bets one round accepts; the settlement posting carries one leg per bettor plus the escrow
// and the house, so it is bounded by this too.
inline constexpr size_t kArcadeBetsPerRoundMax = 1024;
inline constexpr size_t kArcadeLegsPerPostingMax = kArcadeBetsPerRoundMax + 2;
// One stake, and every balance: far below INT64_MAX so sums of a whole batch cannot overflow.
inline constexpr int64_t kArcadeChipsMax = 1'000'000'000'000;
// Group commit (src/arcade/wager_batcher): postings in one commit, the longest the first wager
// of a batch waits for company, and the wagers queued behind the batch in flight (beyond which
// a wager is refused ResourceExhausted instead of queueing without bound).
inline constexpr size_t kArcadeBatchPostingsMax = 1024;
inline constexpr int64_t kArcadeBatchWindowMsDefault = 2;
inline constexpr int64_t kArcadeBatchWindowMsMax = 50;
inline constexpr size_t kArcadeWagersPendingMax = 16'384;
// Accounts whose balance the reservation keeps in memory, and how often a batch whose commit
// failed in a retryable way (Unavailable, UnknownResult, Conflict) is sent again with the same
// keys before its wagers are answered with the error.
inline constexpr size_t kArcadeReservationAccountsMax = 100'000;
inline constexpr int kArcadeBatchCommitAttemptsMax = 3;
// Provable fairness: the longest hash chain one secret may generate (a chain of this length at
// one round per 10 s lasts over three years), and the bytes of the public seed that salts it.
inline constexpr int64_t kArcadeChainLengthMax = 10'000'000;
inline constexpr size_t kArcadeSeedBytesMax = 256;
// The house edge of every game, in basis points (1% = 100), and the highest crash point.
inline constexpr int64_t kArcadeHouseEdgeBp = 100;
inline constexpr int64_t kArcadeCrashX100Max = 1'000'000;  // 10,000.00x
// The lowest cash-out a crash bet may aim for (1.00x would win every round), and the dice
// targets one may bet under, out of 10,000 (1% .. 98% to win).
inline constexpr int64_t kArcadeCashoutX100Min = 101;
inline constexpr int64_t kArcadeDiceTargetMin = 100;
inline constexpr int64_t kArcadeDiceTargetMax = 9'800;
// One stake: small enough that a full round of the largest wins (every bettor at the top crash
// multiplier) still settles in one posting whose every leg is within kArcadeChipsMax; a larger
// stake would make the settlement invalid and wedge the game.
inline constexpr int64_t kArcadeStakeMax = 50'000;
static_assert(kArcadeStakeMax * (kArcadeCrashX100Max / 100) *
                  static_cast<int64_t>(kArcadeBetsPerRoundMax) <=
              kArcadeChipsMax);
// Rounds: the betting window, the frame interval while running (several frames a second), how
// long a dice roll is shown rolling, and the pause after a settlement before the next window.
inline constexpr int64_t kArcadeBettingWindowMs = 5'000;
inline constexpr int64_t kArcadeFrameIntervalMs = 100;
inline constexpr int64_t kArcadeDiceRollMs = 1'000;
inline constexpr int64_t kArcadeSettledPauseMs = 2'000;
// Escrows one reconciliation sweep lists at a time.
inline constexpr size_t kArcadeOpenEscrowsPerSweepMax = 256;
// The casino service (src/arcade/casino.h) around the drivers: the chain a `telos serve` house
// generates from its secret (100,000 rounds, about 9 days at one round per 8 s, after which the
// game stops with an error line, Casino::exhausted_games; and well under
// a second of hashing at start), how often unsettled rounds of a past run are swept for
// refunds, the requests queued for the casino's thread (beyond which one is refused
// ResourceExhausted), the wager answers remembered for retries by key (oldest forgotten first),
// and the longest idempotency key a client may choose (namespaced by the player below
// kArcadeIdempotencyKeyBytesMax).
inline constexpr int64_t kArcadeChainLengthDefault = 100'000;
inline constexpr int64_t kArcadeSweepIntervalMs = 30'000;
inline constexpr size_t kArcadeCasinoInboxMax = 4'096;
inline constexpr size_t kArcadeReceiptsMax = 65'536;
inline constexpr size_t kArcadeClientKeyBytesMax = 64;
// A chip sale whose commit was never confirmed is asked again under its key this many times in
// all (the ledger replays one that did commit) before its coins are held for staff.
inline constexpr int kArcadeBuyAttemptsMax = 3;
// HTTP wagers log in with Basic credentials; a name and password that proved an account are
// remembered this long (a password change takes at most this long to reach HTTP betting), for
// at most this many credentials, so a betting client costs one password hash a minute rather
// than one per request (each one would hold the hash slots telnet and web logins share).
inline constexpr int64_t kArcadeHttpCredentialTtlMs = 60'000;
inline constexpr size_t kArcadeHttpCredentialsMax = 1'024;
// What players in the casino see of the frames (src/arcade/frame_text.h): a text line of a
// rising crash multiplier at most this often, and a GMCP Arcade.Frame at most this often
// (phase changes always go out at once).
inline constexpr int64_t kArcadeTextTickMs = 1'000;
inline constexpr int64_t kArcadeGmcpFrameMs = 250;
// How long an HTTP wager (POST /api/arcade/bet, /cashout) waits for the casino's answer before
// it answers 504 "result unknown, retry with the same key" (a commit is a few ms; this covers
// a stalled disk).
inline constexpr int64_t kArcadeHttpWaitMs = 10'000;

// --- Builder hooks (src/world/scripting.cc; issue 32 item 4): script timers and quest
// predicates. Each timer callback and each predicate is one call under
// kLuaInstructionsPerCallMax, like any hook.
// Timers one zone may have pending (telos.after / telos.every); more are refused (nil).
inline constexpr size_t kLuaTimersPerZoneMax = 64;
// Timer callbacks one heartbeat runs; the rest stay due for the next one, so a zone full of
// hostile timers spends at most this many budgets per heartbeat.
inline constexpr size_t kLuaTimerFiresPerHeartbeatMax = 8;
// A repeating timer's shortest period, and the longest delay of any timer.
inline constexpr int64_t kLuaTimerPeriodMsMin = 1'000;
inline constexpr int64_t kLuaTimerDelayMsMax = 24 * 3'600'000;
// Bytes of a quest step's `when` predicate (game.toml).
inline constexpr size_t kQuestPredicateBytesMax = 4'096;

// --- Game events a world publishes durably (src/shard/game_event_publisher; issue 25)
// Events waiting for the durable stream (the bus or the sequence store down) in one world. An
// event past it is dropped, logged and counted (game_events_dropped_total): boss kills are a
// few an hour, so a full queue means the outage is long, not that the game is busy.
inline constexpr size_t kGameEventQueueMax = 1'024;
// How long a publisher waits before trying the head event again after a failure.
inline constexpr int64_t kGameEventRetryDelayMs = 1'000;
// How far past its source's watermark an event's sequence may jump and still be applied
// (src/director/game_event_tally). A publisher reserves its sequences one at a time and
// publishes them in order, so a genuine gap is the few events dropped after their sequence was
// reserved; a larger jump is a broken or hostile publisher trying to move the watermark past
// the source's genuine events, and the event is parked (refused, kept in the stream, counted
// in game_events_refused_total{reason="sequence_jump"}).
inline constexpr int64_t kGameEventSequenceJumpMax = 10'000;

}  // namespace telos::limits
