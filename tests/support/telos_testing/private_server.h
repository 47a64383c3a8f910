// Throwaway server processes for outage tests: a redis-server or nats-server of the test's own
// on a free loopback port, which the test may kill and start again without touching the shared
// services other tests use. (tests/support is on every test's include path.)
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace telos::testing {

// A loopback TCP port that was free a moment ago, or -1.
inline int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// A child process started from `argv` (argv[0] looked up on PATH); killed with SIGKILL by Kill()
// or the destructor. Start() again after Kill() runs a fresh one.
class PrivateServer {
 public:
  explicit PrivateServer(std::vector<std::string> argv) : argv_(std::move(argv)) {}
  ~PrivateServer() { Kill(); }
  PrivateServer(const PrivateServer&) = delete;
  PrivateServer& operator=(const PrivateServer&) = delete;

  // False when the program cannot be started (not installed).
  bool Start() {
    std::vector<char*> argv;
    for (std::string& a : argv_) argv.push_back(a.data());
    argv.push_back(nullptr);
    return posix_spawnp(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) == 0;
  }

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  std::vector<std::string> argv_;
  pid_t pid_ = -1;
};

}  // namespace telos::testing
