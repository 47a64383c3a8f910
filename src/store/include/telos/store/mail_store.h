// MailStore: in-game mail between characters.
//
// A letter is addressed to a character (by name, any letter case) and lives until the
// recipient deletes it or the character is deleted. The sender is free text (a character's
// display name, or a system sender such as "Postmaster") so the store need not know who may
// send. Message ids are never reused, so a stale "read 7" cannot reach a newer letter. Every
// operation that names a letter also names the recipient: one character cannot read, or learn
// about, another's mail by guessing ids.
//
// Ownership: the store owns the letters; they are returned by value.
//
// Thread safety: implementations are safe to call from any thread. Calls BLOCK on I/O: call
// them from the blocking pool, never from a zone executor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telos/base/status.h"

namespace telos::store {

// One line of a mailbox listing (no body).
struct MailHeader {
  int64_t id = 0;
  std::string from;
  std::string subject;
  int64_t sent_at_ms = 0;  // Unix milliseconds
  bool read = false;

  bool operator==(const MailHeader&) const = default;
};

struct MailMessage {
  int64_t id = 0;
  std::string from;
  std::string to;  // the recipient's display name
  std::string subject;
  std::string body;
  int64_t sent_at_ms = 0;
  bool read = false;

  bool operator==(const MailMessage&) const = default;
};

class MailStore {
 public:
  virtual ~MailStore() = default;

  // Delivers a letter and returns its id. NotFound when the recipient does not exist;
  // ResourceExhausted when their box holds limits::kMailboxMessagesMax letters.
  // REQUIRES: 1..kMailSenderBytesMax bytes of `from`, at most kMailSubjectBytesMax of
  //           `subject`, at most kMailBodyBytesMax of `body` (else InvalidArgument).
  virtual Result<int64_t> Send(std::string_view from, std::string_view to, std::string_view subject,
                               std::string_view body) = 0;

  // The recipient's letters, oldest first, with their read flags. Empty when there are none
  // (also for an unknown recipient).
  virtual Result<std::vector<MailHeader>> List(std::string_view recipient) = 0;

  // How many of the recipient's letters are unread (for "You have mail." at login).
  virtual Result<int64_t> CountUnread(std::string_view recipient) = 0;

  // Returns the letter and marks it read (the returned `read` is true). NotFound when the
  // recipient has no letter with that id.
  virtual Result<MailMessage> Read(std::string_view recipient, int64_t id) = 0;

  // NotFound when the recipient has no letter with that id.
  virtual Status Delete(std::string_view recipient, int64_t id) = 0;
};

}  // namespace telos::store
