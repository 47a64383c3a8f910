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

}  // namespace telos::app
