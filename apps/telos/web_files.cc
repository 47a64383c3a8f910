#include "web_files.h"

#include <fstream>
#include <map>
#include <sstream>

#include "telos/base/limits.h"

namespace telos::app {
namespace {

std::string ContentType(const std::filesystem::path& path) {
  static const std::map<std::string, std::string> kTypes = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".txt", "text/plain; charset=utf-8"},
      {".woff2", "font/woff2"}};
  auto it = kTypes.find(path.extension().string());
  return it == kTypes.end() ? "application/octet-stream" : it->second;
}

bool Skipped(const std::filesystem::path& relative) {
  const std::string first = relative.begin()->string();
  const std::string name = relative.filename().string();
  return first == "test" || first == "node_modules" || name == "package.json" ||
         name == "package-lock.json" || name == "CMakeLists.txt" || name == "README.md" ||
         name.front() == '.';
}

}  // namespace

Result<size_t> ServeWebFiles(net::HttpServer& server, const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(dir / "index.html", ec)) {
    return Status::NotFound("no index.html in " + dir.string());
  }
  size_t count = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const auto relative = std::filesystem::relative(it->path(), dir);
    if (Skipped(relative) || it->file_size() > limits::kWebFileBytesMax) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::ostringstream body;
    body << in.rdbuf();
    auto response = std::make_shared<net::HttpResponse>(
        net::HttpResponse::Text(200, body.str(), ContentType(it->path())));
    response->headers.emplace_back("Cache-Control", "no-cache");
    const auto handler = [response](const net::HttpRequest&) { return *response; };
    const std::string path = "/" + relative.generic_string();
    server.Handle(path, handler);
    if (relative == "index.html") server.Handle("/", handler);
    ++count;
  }
  if (ec) return Status::Unavailable("cannot read " + dir.string() + ": " + ec.message());
  return count;
}

}  // namespace telos::app
