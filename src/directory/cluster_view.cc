#include "telos/directory/cluster_view.h"

#include <algorithm>
#include <boost/json.hpp>
#include <functional>
#include <map>
#include <string_view>
#include <utility>

#include "telos/base/utf8.h"

namespace telos::directory {
namespace {

namespace json = boost::json;

// Ids and endpoints are set by operators: repaired to valid UTF-8 before they become JSON.
json::string Text(std::string_view text) {
  return json::string(SanitizeUtf8(text));
}

json::array Texts(const std::vector<std::string>& items) {
  json::array out;
  out.reserve(items.size());
  for (const std::string& item : items) out.emplace_back(Text(item));
  return out;
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
  // json::object keeps insertion order: the members appear in the documented order.
  json::array shards;
  shards.reserve(view.shards.size());
  for (const ClusterShard& shard : view.shards) {
    json::object out;
    out["id"] = Text(shard.info.id);
    out["endpoint"] = Text(shard.info.endpoint);
    out["ttl_ms"] = shard.info.ttl_ms;
    out["zones"] = Texts(shard.zones);
    out["standby"] = shard.standby;
    out["players"] = shard.players;
    shards.emplace_back(std::move(out));
  }
  json::array zones;
  zones.reserve(view.zones.size());
  for (const ClusterZone& zone : view.zones) {
    json::object out;
    out["zone"] = Text(zone.zone);
    if (zone.owner.has_value()) {
      out["owner"] = json::object{{"shard", Text(zone.owner->shard_id)},
                                  {"endpoint", Text(zone.owner->endpoint)},
                                  {"epoch", zone.owner->epoch},
                                  {"ttl_ms", zone.owner->ttl_ms}};
    } else {
      out["owner"] = nullptr;
    }
    zones.emplace_back(std::move(out));
  }
  json::object doc;
  doc["answered_by"] =
      json::object{{"role", Text(view.answered_by_role)}, {"id", Text(view.answered_by_id)}};
  doc["shards"] = std::move(shards);
  doc["zones"] = std::move(zones);
  doc["standbys"] = Texts(view.standbys);
  return json::serialize(doc);
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
