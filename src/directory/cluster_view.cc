#include "telos/directory/cluster_view.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <utility>

#include "telos/base/log.h"

namespace telos::directory {
namespace {

void AppendJsonString(std::string& out, std::string_view text) {
  out += '"';
  AppendJsonEscaped(out, text);
  out += '"';
}

void AppendJsonStrings(std::string& out, const std::vector<std::string>& items) {
  out += '[';
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    AppendJsonString(out, items[i]);
  }
  out += ']';
}

std::string Joined(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

// Left-aligned columns two spaces apart; the last column is not padded, so no line ends in
// spaces.
std::string FormatTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      out += row[c];
      if (c + 1 < row.size()) out.append(widths[c] - row[c].size() + 2, ' ');
    }
    out += '\n';
  }
  return out;
}

}  // namespace

Result<ClusterView> ReadClusterView(Directory& directory, const std::vector<std::string>& zones,
                                    std::string role, std::string id) {
  ClusterView view;
  view.answered_by_role = std::move(role);
  view.answered_by_id = std::move(id);

  auto shards = directory.ListShards();
  if (!shards.ok()) return shards.status();

  std::vector<std::string> wanted = zones;
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  view.zones.reserve(wanted.size());
  for (std::string& zone : wanted) {
    auto owner = directory.OwnerOfZone(zone);
    if (!owner.ok()) return owner.status();
    view.zones.push_back(ClusterZone{std::move(zone), std::move(*owner)});
  }

  auto occupancy = directory.ListOccupancy();
  if (!occupancy.ok()) return occupancy.status();
  std::map<std::string, int64_t, std::less<>> players_by_shard;
  for (const Occupancy& report : *occupancy) players_by_shard[report.shard] = report.Total();

  std::sort(shards->begin(), shards->end(),
            [](const ShardInfo& a, const ShardInfo& b) { return a.id < b.id; });
  view.shards.reserve(shards->size());
  for (ShardInfo& info : *shards) {
    ClusterShard shard;
    // view.zones is sorted, so each shard's list comes out sorted too.
    for (const ClusterZone& zone : view.zones) {
      if (zone.owner.has_value() && zone.owner->shard_id == info.id) {
        shard.zones.push_back(zone.zone);
      }
    }
    shard.standby = shard.zones.empty();
    if (auto it = players_by_shard.find(info.id); it != players_by_shard.end()) {
      shard.players = it->second;
    }
    if (shard.standby) view.standbys.push_back(info.id);
    shard.info = std::move(info);
    view.shards.push_back(std::move(shard));
  }
  return view;
}

std::string ClusterViewJson(const ClusterView& view) {
  std::string out = "{\"answered_by\":{\"role\":";
  AppendJsonString(out, view.answered_by_role);
  out += ",\"id\":";
  AppendJsonString(out, view.answered_by_id);
  out += "},\"shards\":[";
  for (size_t i = 0; i < view.shards.size(); ++i) {
    const ClusterShard& shard = view.shards[i];
    if (i > 0) out += ',';
    out += "{\"id\":";
    AppendJsonString(out, shard.info.id);
    out += ",\"endpoint\":";
    AppendJsonString(out, shard.info.endpoint);
    out += ",\"ttl_ms\":" + std::to_string(shard.info.ttl_ms);
    out += ",\"zones\":";
    AppendJsonStrings(out, shard.zones);
    out += ",\"standby\":";
    out += shard.standby ? "true" : "false";
    out += ",\"players\":" + std::to_string(shard.players);
    out += '}';
  }
  out += "],\"zones\":[";
  for (size_t i = 0; i < view.zones.size(); ++i) {
    const ClusterZone& zone = view.zones[i];
    if (i > 0) out += ',';
    out += "{\"zone\":";
    AppendJsonString(out, zone.zone);
    out += ",\"owner\":";
    if (!zone.owner.has_value()) {
      out += "null";
    } else {
      out += "{\"shard\":";
      AppendJsonString(out, zone.owner->shard_id);
      out += ",\"endpoint\":";
      AppendJsonString(out, zone.owner->endpoint);
      out += ",\"epoch\":" + std::to_string(zone.owner->epoch);
      out += ",\"ttl_ms\":" + std::to_string(zone.owner->ttl_ms);
      out += '}';
    }
    out += '}';
  }
  out += "],\"standbys\":";
  AppendJsonStrings(out, view.standbys);
  out += '}';
  return out;
}

std::string ClusterViewText(const ClusterView& view) {
  size_t owned = 0;
  for (const ClusterZone& zone : view.zones) owned += zone.owner.has_value() ? 1 : 0;

  std::string out = "cluster as seen by " + view.answered_by_role + " " + view.answered_by_id +
                    ": " + std::to_string(view.shards.size()) + " live shard(s), " +
                    std::to_string(view.standbys.size()) + " standby, " + std::to_string(owned) +
                    "/" + std::to_string(view.zones.size()) + " zone(s) owned\n\n";

  std::vector<std::vector<std::string>> shard_rows = {
      {"SHARD", "ENDPOINT", "TTL_MS", "PLAYERS", "ZONES"}};
  for (const ClusterShard& shard : view.shards) {
    shard_rows.push_back({shard.info.id, shard.info.endpoint, std::to_string(shard.info.ttl_ms),
                          std::to_string(shard.players),
                          shard.standby ? "(standby)" : Joined(shard.zones, ",")});
  }
  if (view.shards.empty()) shard_rows.push_back({"(none)"});
  out += FormatTable(shard_rows);
  out += '\n';

  std::vector<std::vector<std::string>> zone_rows = {
      {"ZONE", "OWNER", "EPOCH", "TTL_MS", "ENDPOINT"}};
  for (const ClusterZone& zone : view.zones) {
    if (!zone.owner.has_value()) {
      zone_rows.push_back({zone.zone, "(unowned)", "-", "-", "-"});
      continue;
    }
    const ZoneOwner& owner = *zone.owner;
    zone_rows.push_back({zone.zone, owner.shard_id, std::to_string(owner.epoch),
                         std::to_string(owner.ttl_ms),
                         owner.endpoint.empty() ? "(registration lapsed)" : owner.endpoint});
  }
  if (view.zones.empty()) zone_rows.push_back({"(none)"});
  out += FormatTable(zone_rows);
  out += '\n';

  out +=
      "standbys: " + (view.standbys.empty() ? std::string("(none)") : Joined(view.standbys, ","));
  out += '\n';
  return out;
}

}  // namespace telos::directory
