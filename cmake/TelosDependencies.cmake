# Every external dependency, found once. All come from Debian 12's packages (scripts/bootstrap).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)

# url parses TELOS_REDIS (src/redis); command lines are CLI11's, so program_options is not used.
find_package(Boost 1.81 CONFIG REQUIRED COMPONENTS system json url)
find_package(OpenSSL REQUIRED)
find_package(ZLIB REQUIRED)

# Debian's HiredisConfig.cmake is broken and hiredis.pc adds -I/usr/include/hiredis, whose
# unprefixed headers (read.h, async.h) would shadow ours: link by path, include <hiredis/...>.
find_library(HIREDIS_LIB hiredis REQUIRED)
add_library(telos_ext_hiredis UNKNOWN IMPORTED)
set_target_properties(telos_ext_hiredis PROPERTIES IMPORTED_LOCATION ${HIREDIS_LIB})
add_library(hiredis::hiredis ALIAS telos_ext_hiredis)

find_package(PostgreSQL REQUIRED)
# Debian's cnats-config.cmake points at a missing static library.
pkg_check_modules(NATS REQUIRED IMPORTED_TARGET libnats)
pkg_check_modules(LUA REQUIRED IMPORTED_TARGET lua5.4)
find_package(SQLite3 REQUIRED)
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)
# The allocator of the telos binary: tcmalloc cut the server's CPU by 9-19% at 10,000 players
# (docs/benchmarks.md), where a player's output is allocated on a zone thread and freed on a
# socket thread. The sanitizers bring an allocator of their own, so sanitized builds keep it.
if(TELOS_TCMALLOC AND NOT TELOS_SANITIZE)
  pkg_check_modules(TCMALLOC REQUIRED IMPORTED_TARGET libtcmalloc_minimal)
endif()

# gRPC and protobuf: protobuf has only CMake's module (no config); gRPC has a config.
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)

find_package(fmt CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(tomlplusplus CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)
# The OpenTelemetry C++ SDK 1.19 with its OTLP exporters: bookworm-backports only (bootstrap).
find_package(opentelemetry-cpp CONFIG REQUIRED)

find_package(GTest CONFIG REQUIRED)
find_package(benchmark CONFIG REQUIRED)
