// MSDP, the MUD Server Data Protocol (telnet option 69): its value encoding, and the agent that
// answers one client's LIST, REPORT, UNREPORT, SEND and RESET commands.
//
// On the wire a message is a sequence of MSDP_VAR <name> MSDP_VAL <value>, where a value is a
// string, an array (MSDP_ARRAY_OPEN { MSDP_VAL <value> } MSDP_ARRAY_CLOSE) or a table
// (MSDP_TABLE_OPEN { MSDP_VAR <name> MSDP_VAL <value> } MSDP_TABLE_CLOSE). A variable followed by
// several MSDP_VALs decodes as an array of them. DecodeMsdp rejects (nullopt) anything that
// does not parse, nests deeper than limits::kMsdpDepthMax or holds more than
// limits::kMsdpItemsMax names and values; it never reads past its input. The encoder drops the
// six marker bytes from strings, so no value can break the structure it is sent in.
//
// MsdpAgent keeps the variables the game has told it (through the GMCP packages the session
// already produces, see UpdateFromGmcp) and the set the client asked to have reported. A
// reported variable is sent when the client reports it and whenever its value changes. Only
// the variables in MsdpReportableVariables() are held, and at most limits::kMsdpReportedMax of
// them are reported, so a client controls no memory beyond those bounds.
//
// Thread safety: MsdpAgent belongs to one connection; the free functions are pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace telos::net {

namespace msdp {
inline constexpr uint8_t kVar = 1;
inline constexpr uint8_t kVal = 2;
inline constexpr uint8_t kTableOpen = 3;
inline constexpr uint8_t kTableClose = 4;
inline constexpr uint8_t kArrayOpen = 5;
inline constexpr uint8_t kArrayClose = 6;
}  // namespace msdp

struct MsdpField;

struct MsdpValue {
  enum class Kind : uint8_t { kString, kArray, kTable };
  Kind kind = Kind::kString;
  std::string text;               // kString
  std::vector<MsdpValue> items;   // kArray
  std::vector<MsdpField> fields;  // kTable, in order

  static MsdpValue String(std::string text);
  static MsdpValue Array(std::vector<MsdpValue> items);
  static MsdpValue Table(std::vector<MsdpField> fields);
  bool operator==(const MsdpValue& other) const;
};

struct MsdpField {  // one name and value of a table
  std::string name;
  MsdpValue value;
  bool operator==(const MsdpField&) const = default;
};

struct MsdpVariable {
  std::string name;
  MsdpValue value;
  bool operator==(const MsdpVariable&) const = default;
};

std::optional<std::vector<MsdpVariable>> DecodeMsdp(std::string_view payload);
// The payload for IAC SB MSDP ... IAC SE.
std::string EncodeMsdp(const std::vector<MsdpVariable>& variables);

// The variables an MsdpAgent can report, in the order LIST REPORTABLE_VARIABLES gives them.
const std::vector<std::string_view>& MsdpReportableVariables();

class MsdpAgent {
 public:
  // Handles one decoded message from the client. Returns the payload to send back (answers
  // to LIST and SEND, current values of newly reported variables), empty if none.
  std::string OnMessage(const std::vector<MsdpVariable>& message);

  // Takes the game's GMCP package (Char.Vitals, Char.Status, Char.Name, Room.Info) and updates
  // the variables it carries. Other packages and JSON that does not parse are ignored.
  void UpdateFromGmcp(std::string_view package, std::string_view json);
  // Sets one variable; ignored unless it is reportable.
  void Set(std::string_view name, MsdpValue value);

  // The payload reporting every reported variable whose value changed since the last call;
  // empty if none.
  std::string TakeReports();

  const std::set<std::string, std::less<>>& reported() const { return reported_; }
  const std::string& client_name() const { return client_name_; }
  const std::string& client_version() const { return client_version_; }

 private:
  void Report(std::string_view name, std::vector<MsdpVariable>& out);
  void Send(std::string_view name, std::vector<MsdpVariable>& out) const;

  std::map<std::string, MsdpValue, std::less<>> values_;
  std::set<std::string, std::less<>> reported_;
  std::set<std::string, std::less<>> changed_;  // reported and changed since TakeReports
  std::string client_name_;
  std::string client_version_;
};

}  // namespace telos::net
