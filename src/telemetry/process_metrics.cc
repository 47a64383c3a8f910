#include "telos/telemetry/process_metrics.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace telos::telemetry {
namespace {

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Seconds since the Unix epoch at boot, from /proc/stat's btime line; 0 if unknown.
int64_t BootTimeSeconds() {
  std::istringstream in(ReadFile("/proc/stat"));
  std::string key;
  int64_t value = 0;
  while (in >> key) {
    if (key == "btime" && in >> value) return value;
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

int64_t OpenFds() {
  std::error_code ec;
  int64_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  return ec ? -1 : n - 1;  // the iterator's own descriptor is not the process's
}

struct ProcessGauges {
  prometheus::Gauge* resident = nullptr;
  prometheus::Gauge* virtual_bytes = nullptr;
  prometheus::Counter* cpu_seconds = nullptr;
  prometheus::Gauge* threads = nullptr;
  prometheus::Gauge* open_fds = nullptr;
  prometheus::Gauge* start_time = nullptr;
  double cpu_counted = 0;  // what cpu_seconds already holds (a counter only goes up)
  int64_t boot_time_s = 0;
  long ticks_per_second = 100;
  long page_bytes = 4096;

  void Refresh() {
    std::istringstream statm(ReadFile("/proc/self/statm"));
    uint64_t size_pages = 0;
    uint64_t resident_pages = 0;
    if (statm >> size_pages >> resident_pages) {
      virtual_bytes->Set(static_cast<double>(size_pages) * static_cast<double>(page_bytes));
      resident->Set(static_cast<double>(resident_pages) * static_cast<double>(page_bytes));
    }
    if (auto stat = ReadProcStat(ReadFile("/proc/self/stat"))) {
      const double cpu = static_cast<double>(stat->utime_ticks + stat->stime_ticks) /
                         static_cast<double>(ticks_per_second);
      if (cpu > cpu_counted) {
        cpu_seconds->Increment(cpu - cpu_counted);
        cpu_counted = cpu;
      }
      threads->Set(static_cast<double>(stat->threads));
      if (boot_time_s > 0) {
        start_time->Set(static_cast<double>(boot_time_s) +
                        static_cast<double>(stat->start_ticks) /
                            static_cast<double>(ticks_per_second));
      }
    }
    if (const int64_t fds = OpenFds(); fds >= 0) open_fds->Set(static_cast<double>(fds));
  }
};

}  // namespace

std::optional<ProcStat> ReadProcStat(std::string_view text) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  // Fields after the command: 3 state, 4 ppid, ... 14 utime, 15 stime, 20 num_threads,
  // 22 starttime (proc(5)); fields[0] here is field 3.
  std::vector<std::string_view> fields;
  std::string_view rest = text.substr(close + 1);
  while (!rest.empty()) {
    const size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const size_t end = rest.find_first_of(" \n");
    fields.push_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end);
  }
  if (fields.size() < 20) return std::nullopt;
  const auto number = [](std::string_view field, auto& out) {
    auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
    return ec == std::errc() && ptr == field.data() + field.size();
  };
  ProcStat stat;
  if (!number(fields[11], stat.utime_ticks) || !number(fields[12], stat.stime_ticks) ||
      !number(fields[17], stat.threads) || !number(fields[19], stat.start_ticks)) {
    return std::nullopt;
  }
  return stat;
}

void AddProcessMetrics(Metrics& metrics, const BuildInfo& build) {
  metrics
      .Gauge("build_info", "1, labelled with the binary's version, build type and compiler",
             {{"version", std::string(build.version)},
              {"build_type", std::string(build.build_type)},
              {"compiler", std::string(build.compiler)}})
      .Set(1);
  auto gauges = std::make_shared<ProcessGauges>();
  gauges->resident = &metrics.Gauge("process_resident_memory_bytes", "Resident memory (RSS)");
  gauges->virtual_bytes = &metrics.Gauge("process_virtual_memory_bytes", "Virtual memory size");
  gauges->cpu_seconds =
      &metrics.Counter("process_cpu_seconds_total", "CPU time used, user and system");
  gauges->threads = &metrics.Gauge("process_threads", "Threads of the process");
  gauges->open_fds = &metrics.Gauge("process_open_fds", "Open file descriptors");
  gauges->start_time =
      &metrics.Gauge("process_start_time_seconds", "When the process started, Unix time");
  gauges->boot_time_s = BootTimeSeconds();
  if (const long t = sysconf(_SC_CLK_TCK); t > 0) gauges->ticks_per_second = t;
  if (const long p = sysconf(_SC_PAGESIZE); p > 0) gauges->page_bytes = p;
  metrics.AddRefresh([gauges] { gauges->Refresh(); });
}

}  // namespace telos::telemetry
