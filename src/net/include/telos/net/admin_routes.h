// The routes every role serves on its HTTP port: /api/health and /metrics.
//
// /api/health answers 200 with {"status":"ok", ...} while the role can do its job and 503 with
// {"status":"degraded", ...} otherwise; the role supplies the document. /metrics renders the
// process's Metrics registry as Prometheus text.
#pragma once

#include <functional>
#include <string>

#include "telos/base/metrics.h"
#include "telos/net/http_server.h"

namespace telos::net {

struct HealthReport {
  bool healthy = true;
  // Extra members for the JSON object, already serialized as `"key":value` pairs joined by
  // commas (e.g. "\"role\":\"world\",\"zones\":3"); may be empty.
  std::string members;
};

using HealthFn = std::function<HealthReport()>;

// REQUIRES: before server.Start(). `metrics` and whatever `health` reads must outlive the server.
void AddAdminRoutes(HttpServer& server, Metrics& metrics, HealthFn health);

}  // namespace telos::net
