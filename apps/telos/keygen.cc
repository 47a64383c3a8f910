#include "keygen.h"

#include <cstdio>
#include <filesystem>

#include "telos/auth/keys.h"

namespace telos::app {

int RunKeygen(const std::string& dir, const std::string& name) {
  const auth::SigningKey key = auth::SigningKey::Generate();
  const Status written = key.WriteFiles(dir, name);
  if (!written.ok()) {
    std::fprintf(stderr, "telos keygen: %s\n", written.message().c_str());
    return 1;
  }
  const std::filesystem::path base(dir);
  std::printf("%s\n%s\n", (base / (name + ".key")).c_str(), (base / (name + ".pub")).c_str());
  return 0;
}

int RunKeygenRotate(const std::string& dir, const std::string& name) {
  auto rotated = auth::RotateKeyFiles(dir, name);
  if (!rotated.ok()) {
    std::fprintf(stderr, "telos keygen --rotate: %s\n", rotated.status().message().c_str());
    return 1;
  }
  const std::filesystem::path base = std::filesystem::absolute(dir);
  const std::string key = (base / (name + ".key")).string();
  const std::string pub = (base / (name + ".pub")).string();
  const std::string previous_key = (base / (name + ".previous.key")).string();
  const std::string previous_pub = (base / (name + ".previous.pub")).string();
  std::printf("new key id %s: %s, %s\n", rotated->current_id.c_str(), key.c_str(), pub.c_str());
  std::printf("previous key id %s: %s, %s\n", rotated->previous_id.c_str(), previous_key.c_str(),
              previous_pub.c_str());
  if (!rotated->dropped_id.empty()) {
    std::printf(
        "deleted key id %s (two rotations old: refused by every verifier restarted below)\n",
        rotated->dropped_id.c_str());
  }
  // The steps are printed for both uses of a pair; the operator follows the one that applies.
  // Verifiers first: once every verifier holds both keys, it no longer matters which key a
  // signer uses, so the signers can restart one by one with nobody refused.
  std::printf(
      "\nRoll it out in this order (copy the files to the hosts that use them first).\n"
      "\nIf this is the assertion key (the account service signs, worlds verify):\n"
      "  1. Restart every world, one at a time, with\n"
      "       TELOS_ASSERTION_VERIFY_KEY_FILE=%s\n"
      "       TELOS_ASSERTION_PREVIOUS_VERIFY_KEY_FILE=%s\n"
      "  2. Then restart the account service with\n"
      "       TELOS_SIGNING_KEY_FILE=%s\n"
      "     (until then it must keep signing with the previous key: if it restarts before\n"
      "     step 1 is done, start it with TELOS_SIGNING_KEY_FILE=%s)\n"
      "\nIf this is the handoff key (worlds sign and verify):\n"
      "  1. Restart every world, one at a time, with\n"
      "       TELOS_HANDOFF_KEY_FILE=%s\n"
      "       TELOS_HANDOFF_VERIFY_KEY_FILE=%s\n"
      "       TELOS_HANDOFF_PREVIOUS_VERIFY_KEY_FILE=%s\n"
      "  2. Then restart every world again, one at a time, with\n"
      "       TELOS_HANDOFF_KEY_FILE=%s (the other two unchanged)\n"
      "\nThe previous key stays accepted until the next rotation replaces it. Delete %s once\n"
      "step 2 is done: no process signs with it any more.\n",
      pub.c_str(), previous_pub.c_str(), key.c_str(), previous_key.c_str(), previous_key.c_str(),
      pub.c_str(), previous_pub.c_str(), key.c_str(), previous_key.c_str());
  return 0;
}

}  // namespace telos::app
