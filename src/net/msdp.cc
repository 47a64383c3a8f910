#include "telos/net/msdp.h"

#include <algorithm>
#include <boost/json.hpp>

#include "telos/base/limits.h"
#include "telos/base/utf8.h"

namespace telos::net {
namespace {

namespace json = boost::json;
using namespace msdp;  // NOLINT: the marker names read better unqualified

bool IsMarker(char c) {
  const auto b = static_cast<uint8_t>(c);
  return b >= kVar && b <= kArrayClose;
}

// A recursive-descent reader over one payload. Every step consumes at least one byte or
// fails, and depth and item counts are bounded, so hostile input costs linear time.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool Message(std::vector<MsdpVariable>& out) {
    while (pos_ < in_.size()) {
      MsdpVariable var;
      if (!Variable(var, 0)) return false;
      out.push_back(std::move(var));
    }
    return true;
  }

 private:
  bool At(uint8_t marker) const {
    return pos_ < in_.size() && static_cast<uint8_t>(in_[pos_]) == marker;
  }
  bool Count() { return ++items_ <= limits::kMsdpItemsMax; }

  std::string Text() {
    const size_t start = pos_;
    while (pos_ < in_.size() && !IsMarker(in_[pos_])) ++pos_;
    return std::string(in_.substr(start, pos_ - start));
  }

  // VAR <name> then zero or more VAL <value>: one value, or several taken as an array.
  bool Variable(MsdpVariable& var, size_t depth) {
    if (!At(kVar) || !Count()) return false;
    ++pos_;
    var.name = Text();
    std::vector<MsdpValue> values;
    while (At(kVal)) {
      ++pos_;
      if (!Count()) return false;
      MsdpValue value;
      if (!Value(value, depth)) return false;
      values.push_back(std::move(value));
    }
    // Several values are an array, and count as one level as the array they encode to does.
    if (values.size() > 1 && depth + 1 > limits::kMsdpDepthMax) return false;
    if (values.size() == 1) {
      var.value = std::move(values[0]);
    } else if (values.size() > 1) {
      var.value = MsdpValue::Array(std::move(values));
    }
    return true;
  }

  bool Value(MsdpValue& value, size_t depth) {
    if (At(kTableOpen)) {
      if (depth + 1 > limits::kMsdpDepthMax) return false;
      ++pos_;
      value.kind = MsdpValue::Kind::kTable;
      while (!At(kTableClose)) {
        MsdpVariable field;
        if (!Variable(field, depth + 1)) return false;  // also fails at the end of input
        value.fields.push_back({std::move(field.name), std::move(field.value)});
      }
      ++pos_;
      return true;
    }
    if (At(kArrayOpen)) {
      if (depth + 1 > limits::kMsdpDepthMax) return false;
      ++pos_;
      value.kind = MsdpValue::Kind::kArray;
      while (!At(kArrayClose)) {
        if (!At(kVal) || !Count()) return false;
        ++pos_;
        MsdpValue item;
        if (!Value(item, depth + 1)) return false;
        value.items.push_back(std::move(item));
      }
      ++pos_;
      return true;
    }
    // Any other marker (VAR, VAL, a close) ends a string, which may be empty.
    value.kind = MsdpValue::Kind::kString;
    value.text = Text();
    return true;
  }

  std::string_view in_;
  size_t pos_ = 0;
  size_t items_ = 0;
};

void AppendText(std::string& out, std::string_view text) {
  for (const char c : text) {
    if (!IsMarker(c)) out.push_back(c);
  }
}

void AppendValue(std::string& out, const MsdpValue& value) {
  switch (value.kind) {
    case MsdpValue::Kind::kString: AppendText(out, value.text); return;
    case MsdpValue::Kind::kArray:
      out.push_back(static_cast<char>(kArrayOpen));
      for (const MsdpValue& item : value.items) {
        out.push_back(static_cast<char>(kVal));
        AppendValue(out, item);
      }
      out.push_back(static_cast<char>(kArrayClose));
      return;
    case MsdpValue::Kind::kTable:
      out.push_back(static_cast<char>(kTableOpen));
      for (const auto& [name, field] : value.fields) {
        out.push_back(static_cast<char>(kVar));
        AppendText(out, name);
        out.push_back(static_cast<char>(kVal));
        AppendValue(out, field);
      }
      out.push_back(static_cast<char>(kTableClose));
      return;
  }
}

// The strings a command's argument names: one string, or the strings of an array.
std::vector<std::string> Names(const MsdpValue& value) {
  std::vector<std::string> out;
  if (value.kind == MsdpValue::Kind::kString) {
    if (!value.text.empty()) out.push_back(value.text);
  } else if (value.kind == MsdpValue::Kind::kArray) {
    for (const MsdpValue& item : value.items) {
      if (item.kind == MsdpValue::Kind::kString && !item.text.empty()) out.push_back(item.text);
    }
  }
  return out;
}

MsdpValue StringList(const std::vector<std::string_view>& names) {
  std::vector<MsdpValue> items;
  items.reserve(names.size());
  for (const std::string_view name : names) items.push_back(MsdpValue::String(std::string(name)));
  return MsdpValue::Array(std::move(items));
}

const std::vector<std::string_view> kCommands{"LIST", "REPORT", "RESET", "SEND", "UNREPORT"};
const std::vector<std::string_view> kLists{"COMMANDS",
                                           "LISTS",
                                           "CONFIGURABLE_VARIABLES",
                                           "REPORTABLE_VARIABLES",
                                           "REPORTED_VARIABLES",
                                           "SENDABLE_VARIABLES"};
const std::vector<std::string_view> kConfigurable{"CLIENT_NAME", "CLIENT_VERSION"};

bool IsReportable(std::string_view name) {
  const auto& all = MsdpReportableVariables();
  return std::find(all.begin(), all.end(), name) != all.end();
}

// A JSON scalar as MSDP text; nullopt for what is not a scalar.
std::optional<std::string> Scalar(const json::value& v) {
  if (v.is_string()) return SanitizeUtf8(std::string_view(v.as_string()), Utf8Controls::kDrop);
  if (v.is_int64()) return std::to_string(v.as_int64());
  if (v.is_uint64()) return std::to_string(v.as_uint64());
  if (v.is_double()) return std::to_string(static_cast<int64_t>(v.as_double()));
  if (v.is_bool()) return std::string(v.as_bool() ? "1" : "0");
  return std::nullopt;
}

}  // namespace

MsdpValue MsdpValue::String(std::string text) {
  MsdpValue v;
  v.text = std::move(text);
  return v;
}

MsdpValue MsdpValue::Array(std::vector<MsdpValue> items) {
  MsdpValue v;
  v.kind = Kind::kArray;
  v.items = std::move(items);
  return v;
}

MsdpValue MsdpValue::Table(std::vector<MsdpField> fields) {
  MsdpValue v;
  v.kind = Kind::kTable;
  v.fields = std::move(fields);
  return v;
}

bool MsdpValue::operator==(const MsdpValue& other) const {
  return kind == other.kind && text == other.text && items == other.items && fields == other.fields;
}

std::optional<std::vector<MsdpVariable>> DecodeMsdp(std::string_view payload) {
  std::vector<MsdpVariable> out;
  Reader reader(payload);
  if (!reader.Message(out)) return std::nullopt;
  return out;
}

std::string EncodeMsdp(const std::vector<MsdpVariable>& variables) {
  std::string out;
  for (const MsdpVariable& var : variables) {
    out.push_back(static_cast<char>(kVar));
    AppendText(out, var.name);
    out.push_back(static_cast<char>(kVal));
    AppendValue(out, var.value);
  }
  return out;
}

const std::vector<std::string_view>& MsdpReportableVariables() {
  static const std::vector<std::string_view> kAll{
      "CHARACTER_NAME", "HEALTH",       "HEALTH_MAX", "MANA",       "MANA_MAX",
      "MOVEMENT",       "MOVEMENT_MAX", "LEVEL",      "EXPERIENCE", "MONEY",
      "ROOM",           "ROOM_NAME",    "ROOM_VNUM",  "AREA_NAME",  "ROOM_EXITS"};
  return kAll;
}

void MsdpAgent::Set(std::string_view name, MsdpValue value) {
  if (!IsReportable(name)) return;
  auto it = values_.find(name);
  if (it != values_.end() && it->second == value) return;
  if (it == values_.end()) {
    values_.emplace(std::string(name), std::move(value));
  } else {
    it->second = std::move(value);
  }
  if (reported_.contains(name)) changed_.emplace(name);
}

void MsdpAgent::Send(std::string_view name, std::vector<MsdpVariable>& out) const {
  if (auto it = values_.find(name); it != values_.end()) out.push_back({it->first, it->second});
}

void MsdpAgent::Report(std::string_view name, std::vector<MsdpVariable>& out) {
  if (!IsReportable(name)) return;
  if (!reported_.contains(name)) {
    if (reported_.size() >= limits::kMsdpReportedMax) return;
    reported_.emplace(name);
  }
  changed_.erase(std::string(name));  // the value goes out now
  Send(name, out);
}

std::string MsdpAgent::OnMessage(const std::vector<MsdpVariable>& message) {
  std::vector<MsdpVariable> out;
  for (const MsdpVariable& var : message) {
    const std::vector<std::string> args = Names(var.value);
    if (var.name == "LIST") {
      for (const std::string& list : args) {
        if (list == "COMMANDS") {
          out.push_back({list, StringList(kCommands)});
        } else if (list == "LISTS") {
          out.push_back({list, StringList(kLists)});
        } else if (list == "REPORTABLE_VARIABLES" || list == "SENDABLE_VARIABLES") {
          out.push_back({list, StringList(MsdpReportableVariables())});
        } else if (list == "REPORTED_VARIABLES") {
          out.push_back({list, StringList({reported_.begin(), reported_.end()})});
        } else if (list == "CONFIGURABLE_VARIABLES") {
          out.push_back({list, StringList(kConfigurable)});
        }
      }
    } else if (var.name == "REPORT") {
      for (const std::string& name : args) Report(name, out);
    } else if (var.name == "UNREPORT") {
      for (const std::string& name : args) {
        reported_.erase(name);
        changed_.erase(name);
      }
    } else if (var.name == "SEND") {
      for (const std::string& name : args) Send(name, out);
    } else if (var.name == "RESET") {
      for (const std::string& list : args) {
        if (list == "REPORTABLE_VARIABLES" || list == "REPORTED_VARIABLES") {
          reported_.clear();
          changed_.clear();
        }
      }
    } else if (var.name == "CLIENT_NAME" || var.name == "CLIENT_VERSION") {
      if (var.value.kind != MsdpValue::Kind::kString) continue;
      std::string text =
          SanitizeUtf8(std::string_view(var.value.text).substr(0, limits::kMsdpValueBytesMax),
                       Utf8Controls::kDrop);
      (var.name == "CLIENT_NAME" ? client_name_ : client_version_) = std::move(text);
    }
  }
  // One answer per variable: a client that names a variable many times in one message (REPORT
  // ROOM ROOM ROOM ...) gets it once, so the answer stays within the items one message may hold
  // and decodes like any other.
  std::vector<MsdpVariable> unique;
  unique.reserve(out.size());
  for (MsdpVariable& var : out) {
    auto same = std::find_if(unique.begin(), unique.end(),
                             [&](const MsdpVariable& kept) { return kept.name == var.name; });
    if (same == unique.end()) {
      unique.push_back(std::move(var));
    } else {
      *same = std::move(var);
    }
  }
  return unique.empty() ? std::string() : EncodeMsdp(unique);
}

std::string MsdpAgent::TakeReports() {
  if (changed_.empty()) return {};
  std::vector<MsdpVariable> out;
  for (const std::string& name : changed_) Send(name, out);
  changed_.clear();
  return out.empty() ? std::string() : EncodeMsdp(out);
}

void MsdpAgent::UpdateFromGmcp(std::string_view package, std::string_view body) {
  const bool known = package == "Char.Vitals" || package == "Char.Status" ||
                     package == "Char.Name" || package == "Room.Info";
  if (!known) return;
  boost::system::error_code ec;
  const json::value doc = json::parse(body, ec);
  if (ec || !doc.is_object()) return;
  const json::object& obj = doc.as_object();
  const auto field = [&obj](std::string_view key) -> std::optional<std::string> {
    const json::value* v = obj.if_contains(key);
    return v == nullptr ? std::nullopt : Scalar(*v);
  };
  const auto set = [&](std::string_view msdp_name, std::string_view key) {
    if (auto v = field(key)) Set(msdp_name, MsdpValue::String(std::move(*v)));
  };
  if (package == "Char.Vitals") {
    set("HEALTH", "hp");
    set("HEALTH_MAX", "maxhp");
    set("MANA", "mana");
    set("MANA_MAX", "maxmana");
    set("MOVEMENT", "moves");
    set("MOVEMENT_MAX", "maxmoves");
  } else if (package == "Char.Status") {
    set("CHARACTER_NAME", "name");
    set("LEVEL", "level");
    set("EXPERIENCE", "exp");
    set("MONEY", "gold");
  } else if (package == "Char.Name") {
    set("CHARACTER_NAME", "name");
  } else {  // Room.Info: mapper fields first ("num", "area"), the world's own ("id", "zone") else
    std::optional<std::string> vnum = field("num");
    if (!vnum) vnum = field("id");
    std::optional<std::string> area = field("area");
    if (!area) area = field("zone");
    const std::optional<std::string> name = field("name");
    std::vector<MsdpField> exits;
    if (const json::value* e = obj.if_contains("exits"); e != nullptr && e->is_object()) {
      for (const auto& exit : e->as_object()) {
        if (exits.size() >= limits::kMsdpItemsMax / 4) break;
        if (auto to = Scalar(exit.value())) {
          exits.push_back({SanitizeUtf8(std::string_view(exit.key()), Utf8Controls::kDrop),
                           MsdpValue::String(std::move(*to))});
        }
      }
    }
    std::vector<MsdpField> room;
    if (vnum) room.push_back({"VNUM", MsdpValue::String(*vnum)});
    if (name) room.push_back({"NAME", MsdpValue::String(*name)});
    if (area) room.push_back({"AREA", MsdpValue::String(*area)});
    room.push_back({"EXITS", MsdpValue::Table(exits)});
    if (vnum) Set("ROOM_VNUM", MsdpValue::String(*vnum));
    if (name) Set("ROOM_NAME", MsdpValue::String(*name));
    if (area) Set("AREA_NAME", MsdpValue::String(*area));
    Set("ROOM_EXITS", MsdpValue::Table(std::move(exits)));
    Set("ROOM", MsdpValue::Table(std::move(room)));
  }
}

}  // namespace telos::net
