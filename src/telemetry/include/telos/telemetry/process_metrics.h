// Process metrics and build_info, registered in a role's Metrics so /metrics and the OTLP
// export both carry them.
//
// Contract: AddProcessMetrics registers, once per registry,
//   telos_build_info{version,build_type,compiler}            gauge, always 1
//   telos_process_resident_memory_bytes                      gauge (RSS)
//   telos_process_virtual_memory_bytes                       gauge
//   telos_process_cpu_seconds_total                          counter (user + system)
//   telos_process_threads, telos_process_open_fds            gauges
//   telos_process_start_time_seconds                         gauge (Unix time)
// and refreshes them from /proc/self each time the registry is read (Metrics::AddRefresh), so
// they cost nothing between reads. A /proc file that cannot be read leaves its gauge as it was.
//
// ReadProcStat parses /proc/<pid>/stat text (exposed for tests: the command name may hold
// spaces and parentheses, so fields count from the last ')').
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "telos/base/metrics.h"

namespace telos::telemetry {

struct BuildInfo {
  std::string_view version;
  std::string_view build_type;
  std::string_view compiler;
};

void AddProcessMetrics(Metrics& metrics, const BuildInfo& build);

struct ProcStat {
  uint64_t utime_ticks = 0;
  uint64_t stime_ticks = 0;
  int64_t threads = 0;
  uint64_t start_ticks = 0;  // after boot
};
std::optional<ProcStat> ReadProcStat(std::string_view text);

}  // namespace telos::telemetry
