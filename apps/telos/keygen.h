// `telos keygen`: makes an Ed25519 key pair for the fleet's signed documents (the account
// service's assertion key, the worlds' handoff key) and writes it as `<dir>/<name>.key` (the
// secret seed, mode 0600) and `<dir>/<name>.pub` (the public key). Existing keys are never
// overwritten.
#pragma once

#include <string>

namespace telos::app {

// Prints the two paths written and returns 0, or prints the error on stderr and returns 1.
int RunKeygen(const std::string& dir, const std::string& name);

}  // namespace telos::app
