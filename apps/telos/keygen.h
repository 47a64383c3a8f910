// `telos keygen`: makes an Ed25519 key pair for the fleet's signed documents (the account
// service's assertion key, the worlds' handoff key) and writes it as `<dir>/<name>.key` (the
// secret seed, mode 0600) and `<dir>/<name>.pub` (the public key). Existing keys are never
// overwritten.
//
// `telos keygen --rotate` rotates an existing pair in place (auth::RotateKeyFiles): the pair in
// service becomes `<name>.previous.key` / `<name>.previous.pub`, a fresh pair takes the plain
// names, and the pair two rotations old is deleted. It prints the key ids and the order in
// which to restart the fleet so that no document is refused during the roll: verifiers first
// (they accept both keys), signers last (SECURITY.md, "Rotating keys and tokens").
#pragma once

#include <string>

namespace telos::app {

// Prints the two paths written and returns 0, or prints the error on stderr and returns 1.
int RunKeygen(const std::string& dir, const std::string& name);
// Rotates `<dir>/<name>.*` and prints what changed and the roll-out steps; 0 on success, or
// prints the error on stderr and returns 1.
int RunKeygenRotate(const std::string& dir, const std::string& name);

}  // namespace telos::app
