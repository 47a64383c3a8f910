// The arcade's HTTP API (issue 27 item 3), on the gate's public listener:
//   GET  /api/arcade/rounds/<game>-<round>  a revealed round's proof, for anyone: its hash, the
//        next round's hash once revealed (SHA-256 of it equals this hash), the outcome
//   POST /api/arcade/bet      {"character", "game", "stake", "target", "key"}
//   POST /api/arcade/cashout  {"character", "key"}
// The two POSTs authenticate the caller as the web client's login does: the account's name and
// password (HTTP Basic), checked by the account desk (throttled by address), and the character
// must belong to that account. "key" is the client's idempotency key: a retry with it answers
// the original result. Bad input is a 400 naming what is wrong; nothing is staked then.
#pragma once

#include <string>

#include "telos/account/account_desk.h"
#include "telos/arcade/casino.h"
#include "telos/base/blocking.h"
#include "telos/base/status.h"
#include "telos/net/http_server.h"

namespace telos::app {

// REQUIRES: before the server starts; `casino` and `desk` outlive it.
void AddArcadeRoutes(net::HttpServer& http, arcade::Casino& casino, account::AccountDesk& desk,
                     BlockingRunner blocking);

// "dice-17" -> {"dice", 17}; InvalidArgument otherwise.
Result<std::pair<std::string, int64_t>> ParseRoundId(std::string_view id);
// The account name and password of an "Authorization: Basic ..." header; Unauthenticated
// (PermissionDenied) when missing or malformed.
Result<std::pair<std::string, std::string>> ParseBasicAuth(std::string_view header);

}  // namespace telos::app
