// Serves the browser client: every file under a folder (web/) is read once at startup and
// answered from memory at "/<its path>", with "/" answering index.html. Test tooling inside the
// folder (test/, node_modules/, package files) is not served.
#pragma once

#include <filesystem>

#include "telos/base/log.h"
#include "telos/base/status.h"
#include "telos/net/http_server.h"

namespace telos::app {

// Returns how many files were registered; NotFound when `dir` has no index.html.
Result<size_t> ServeWebFiles(net::HttpServer& server, const std::filesystem::path& dir);

}  // namespace telos::app
