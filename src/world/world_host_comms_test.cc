// WorldHost's side of a fleet's chat: tells and channel lines that leave the host through
// RemoteComms, the entry points the far end calls (DeliverTell, DeliverChannel, Notify), the
// unread-mail notice at login, and the PingingMail decorator. Everything runs on one
// ManualExecutor on the test's thread; RecordingComms stands in for the bus and keeps each
// tell's answer callback so a test decides when (and from which thread) it fires.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "telos/world/character_state.h"
#include "telos/world/mail_ping.h"
#include "telos/world/world_host.h"
#include "world_test_util.h"

namespace telos::world {
namespace {

using ::testing::ElementsAre;
using testing::FakeMail;
using testing::FakePasswords;
using testing::FakePersistence;
using testing::FakeSink;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::TempDir;

constexpr const char* kOnlyThisShard = "Only players on this shard heard that";

// Counts the non-overlapping occurrences of `needle` in `text`.
size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The far end of RemoteComms, recorded. Called on the zone executor, i.e. the test's thread.
class RecordingComms final : public RemoteComms {
 public:
  struct TellCall {
    std::string from, to, text;
    std::function<void(std::string)> answer;
  };
  struct ChannelCall {
    std::string channel, from, text;
    bool operator==(const ChannelCall&) const = default;
  };

  void Tell(const std::string& from, const std::string& to, const std::string& text,
            std::function<void(std::string)> answer) override {
    tells.push_back({from, to, text, std::move(answer)});
  }
  bool Channel(const std::string& channel, const std::string& from,
               const std::string& text) override {
    channels.push_back({channel, from, text});
    return channel_sent;
  }
  void Party(const std::string& to, const std::string& message,
             std::function<void(std::string)> failed) override {
    parties.push_back({to, message, std::move(failed)});
  }
  struct PartyCall {
    std::string to, message;
    std::function<void(std::string)> failed;
  };
  std::vector<PartyCall> parties;

  std::vector<TellCall> tells;
  std::vector<ChannelCall> channels;
  bool channel_sent = true;  // what Channel() answers
};

// The far end of RemoteBroadcasts, recorded.
class RecordingBroadcasts final : public RemoteBroadcasts {
 public:
  struct Call {
    std::string zone, text;
    bool operator==(const Call&) const = default;
  };
  bool Broadcast(const std::string& zone, const std::string& text) override {
    calls.push_back({zone, text});
    return sent;
  }
  std::vector<Call> calls;
  bool sent = true;
};

void PrintTo(const RecordingBroadcasts::Call& c, std::ostream* os) {
  *os << "{" << c.zone << ", " << c.text << "}";
}

void PrintTo(const RecordingComms::ChannelCall& c, std::ostream* os) {
  *os << "{" << c.channel << ", " << c.from << ", " << c.text << "}";
}

// A post office whose List answers fail, or wait until the test releases them.
class ScriptedMail final : public MailPort {
 public:
  enum class Mode { kFail, kDefer };
  explicit ScriptedMail(Mode mode) : mode_(mode) {}

  void Send(std::string, std::string, std::string, std::string,
            std::function<void(Status)> done) override {
    done(Status::Unavailable("closed"));
  }
  void List(std::string owner, std::function<void(Result<std::vector<MailHeader>>)> done) override {
    lists.push_back(owner);
    if (mode_ == Mode::kFail) return done(Status::Unavailable("the post office is closed"));
    deferred.push_back(std::move(done));
  }
  void Read(std::string, int64_t, std::function<void(Result<MailMessage>)> done) override {
    done(Status::NotFound("no such letter"));
  }

  std::vector<std::string> lists;  // owners asked for
  std::vector<std::function<void(Result<std::vector<MailHeader>>)>> deferred;

 private:
  Mode mode_;
};

MailMessage Letter(int64_t id, const std::string& from, bool read) {
  MailMessage m;
  m.header = {id, from, "hello", 0, read};
  m.body = "hello";
  return m;
}

class WorldHostCommsTest : public ::testing::Test {
 protected:
  WorldHostCommsTest() {
    testing::WriteSmallPack(dir_);
    std::vector<Problem> problems;
    Result<Pack> loaded = LoadPack(dir_.path(), &problems);
    for (const Problem& p : problems) ADD_FAILURE() << p.ToString();
    RELEASE_ASSERT(loaded.ok(), loaded.status().ToString());
    pack_ = std::make_shared<const Pack>(std::move(loaded).value());
    logger_ = std::make_unique<Logger>("world", LogLevel::kError);
  }

  ~WorldHostCommsTest() override {
    if (host_ == nullptr) return;
    for (const std::string& zone : host_->RunningZones()) {
      (void)host_->StopZone(zone, [](std::vector<PlayerTransfer>) {});
    }
    executor_.RunReady();
  }

  // Builds and starts the host. `comms` (may be null) is set before any zone starts, as the
  // contract requires; `mail` defaults to the FakeMail.
  void Build(RemoteComms* comms, MailPort* mail = nullptr, RemoteBroadcasts* broadcasts = nullptr) {
    ZoneDeps deps;
    deps.clock = &clock_;
    deps.logger = logger_.get();
    deps.metrics = &metrics_;
    deps.persistence = &persistence_;
    deps.mail = mail != nullptr ? mail : &mail_;
    deps.passwords = &passwords_;
    host_ = std::make_unique<WorldHost>(
        pack_, deps,
        [this](const std::string&) {
          return std::shared_ptr<Executor>(std::shared_ptr<Executor>(), &executor_);
        },
        42);
    if (comms != nullptr) host_->SetRemoteComms(comms);
    if (broadcasts != nullptr) host_->SetRemoteBroadcasts(broadcasts);
    const Status s = host_->StartAllZones();
    RELEASE_ASSERT(s.ok(), s.ToString());
    executor_.RunDue();
  }

  std::shared_ptr<FakeSink> Login(const std::string& name, const std::string& room = "") {
    CharacterState state = NewCharacter(name, pack_->start_room);
    if (!room.empty()) state.room = *ParseRef(room, "");
    auto sink = std::make_shared<FakeSink>();
    mail_.boxes[NameKey(name)];  // every player can receive mail
    const Status s = host_->Login(std::move(state), sink);
    RELEASE_ASSERT(s.ok(), s.ToString());
    executor_.RunReady();
    sinks_[name] = sink;
    return sink;
  }

  std::string Do(const std::string& name, const std::string& line) {
    const Status s = host_->Submit(name, line);
    RELEASE_ASSERT(s.ok(), s.ToString());
    executor_.RunReady();
    return sinks_.at(name)->Take();
  }

  TempDir dir_;
  std::shared_ptr<const Pack> pack_;
  ManualClock clock_;
  Metrics metrics_;
  FakePersistence persistence_;
  FakeMail mail_;
  FakePasswords passwords_;
  RecordingComms comms_;
  std::unique_ptr<Logger> logger_;
  // Declared after the fakes and before the host: queued tasks keep zones alive until the
  // executor goes, and the zones use everything above.
  ManualExecutor executor_{clock_};
  std::unique_ptr<WorldHost> host_;
  std::map<std::string, std::shared_ptr<FakeSink>> sinks_;
};

// ---------------------------------------------------------------- announcements

TEST_F(WorldHostCommsTest, AnAnnouncementReachesItsScopeHereAndGoesToTheOtherShards) {
  RecordingBroadcasts broadcasts;
  Build(&comms_, nullptr, &broadcasts);
  auto alice = Login("Alice");  // the lobby
  auto bob = Login("Bob", "town:square");
  alice->Take();
  bob->Take();

  EXPECT_TRUE(host_->Announce("", "The realm trembles."));
  executor_.RunReady();
  EXPECT_EQ(Count(alice->Take(), "The realm trembles."), 1u);
  EXPECT_EQ(Count(bob->Take(), "The realm trembles."), 1u);

  EXPECT_TRUE(host_->Announce("town", "Market day!"));
  executor_.RunReady();
  EXPECT_THAT(alice->Take(), Not(HasSubstr("Market day!")));
  EXPECT_EQ(Count(bob->Take(), "Market day!"), 1u);
  EXPECT_THAT(broadcasts.calls, ElementsAre(RecordingBroadcasts::Call{"", "The realm trembles."},
                                            RecordingBroadcasts::Call{"town", "Market day!"}));

  // With the bus down the players here still hear it, and the caller learns the rest did not.
  broadcasts.sent = false;
  EXPECT_FALSE(host_->Announce("", "Only us."));
  executor_.RunReady();
  EXPECT_EQ(Count(alice->Take(), "Only us."), 1u);
}

TEST_F(WorldHostCommsTest, AnAnnouncementFromElsewhereIsDeliveredHereOnlyAndNotSentOnAgain) {
  RecordingBroadcasts broadcasts;
  Build(&comms_, nullptr, &broadcasts);
  auto alice = Login("Alice");
  auto bob = Login("Bob", "town:square");
  alice->Take();
  bob->Take();
  host_->DeliverAnnouncement("lobby", "The atrium doors open.");
  host_->DeliverAnnouncement("moor", "Nobody here runs the moor.");
  executor_.RunReady();
  EXPECT_EQ(Count(alice->Take(), "The atrium doors open."), 1u);
  const std::string bobs = bob->Take();
  EXPECT_THAT(bobs, Not(HasSubstr("atrium doors")));
  EXPECT_THAT(bobs, Not(HasSubstr("moor")));
  EXPECT_THAT(broadcasts.calls, IsEmpty());
}

TEST_F(WorldHostCommsTest, AnAnnouncementWithoutAFleetReachesThisHostAlone) {
  Build(nullptr);
  auto alice = Login("Alice");
  alice->Take();
  EXPECT_TRUE(host_->Announce("", "Hear ye."));
  executor_.RunReady();
  EXPECT_EQ(Count(alice->Take(), "Hear ye."), 1u);
}

// ---------------------------------------------------------------- tells

TEST_F(WorldHostCommsTest, TellToALocalPlayerIsDeliveredHereAndNeverAsksTheComms) {
  Build(&comms_);
  Login("Alice")->Take();
  auto bob = Login("Bob", "town:square");
  bob->Take();
  EXPECT_THAT(Do("Alice", "tell BOB see you at the fountain"),
              HasSubstr("You tell Bob, 'see you at the fountain'"));
  EXPECT_THAT(bob->Take(), HasSubstr("Alice tells you, 'see you at the fountain'"));
  EXPECT_THAT(comms_.tells, IsEmpty());
}

TEST_F(WorldHostCommsTest, TellToSomeoneNotHereGoesToTheCommsAndItsAnswerReachesTheSender) {
  Build(&comms_);
  auto alice = Login("Alice");
  alice->Take();
  // The local miss is not answered here: only the comms know whether carol is elsewhere.
  EXPECT_THAT(Do("Alice", "tell carol are you there?"), Not(HasSubstr("Nobody called")));
  ASSERT_EQ(comms_.tells.size(), 1u);
  EXPECT_EQ(comms_.tells[0].from, "Alice");
  EXPECT_EQ(comms_.tells[0].to, "carol");
  EXPECT_EQ(comms_.tells[0].text, "are you there?");

  // The answer comes on another thread (a bus thread) and reaches Alice through her zone.
  std::thread bus_thread([answer = comms_.tells[0].answer] { answer("You tell Carol, 'hi'"); });
  bus_thread.join();
  EXPECT_EQ(alice->Take(), "");  // nothing until Alice's zone runs
  executor_.RunReady();
  EXPECT_EQ(alice->Take(), "You tell Carol, 'hi'\n");
}

TEST_F(WorldHostCommsTest, TellAnswerFindsTheSenderInTheZoneTheyAreInByThen) {
  Build(&comms_);
  auto alice = Login("Alice");
  Do("Alice", "tell carol hello");
  ASSERT_EQ(comms_.tells.size(), 1u);
  EXPECT_THAT(Do("Alice", "east"), HasSubstr("Market Square"));
  ASSERT_EQ(host_->ZoneOf("Alice"), "town");

  comms_.tells[0].answer("carol is not online.");
  executor_.RunReady();
  EXPECT_THAT(alice->Take(), HasSubstr("carol is not online."));

  // An answer for a sender who has left the world goes nowhere, and harms nothing.
  Do("Alice", "tell carol still there?");
  ASSERT_EQ(comms_.tells.size(), 2u);
  EXPECT_THAT(Do("Alice", "quit"), HasSubstr("Farewell."));
  comms_.tells[1].answer("You tell Carol, 'still there?'");
  executor_.RunReady();
  EXPECT_THAT(alice->Take(), Not(HasSubstr("still there")));
  EXPECT_EQ(host_->online_count(), 0u);
}

TEST_F(WorldHostCommsTest, TellWithoutCommsSaysNobodyIsOnline) {
  Build(nullptr);
  Login("Alice")->Take();
  EXPECT_THAT(Do("Alice", "tell Carol hi"), HasSubstr("Nobody called 'Carol' is online."));
}

TEST_F(WorldHostCommsTest, TellToAPlayerWhoseZoneIsStoppingCannotBeHeardAndStaysLocal) {
  Build(&comms_);
  auto alice = Login("Alice");
  auto bob = Login("Bob", "town:square");
  alice->Take();
  bob->Take();
  // Alice's tell runs after the town left the host but before its players left the roster:
  // Bob is still known here, so the comms must not be asked and Alice hears why.
  ASSERT_TRUE(host_->Submit("Alice", "tell bob wait for me").ok());
  ASSERT_TRUE(host_->StopZone("town", [](std::vector<PlayerTransfer>) {}).ok());
  executor_.RunReady();
  EXPECT_THAT(alice->Take(), HasSubstr("Bob cannot hear you right now."));
  EXPECT_THAT(bob->Take(), Not(HasSubstr("wait for me")));
  EXPECT_THAT(comms_.tells, IsEmpty());
}

// ---------------------------------------------------------------- channels

TEST_F(WorldHostCommsTest, ChannelIsHeardInEveryLocalZoneThenOfferedToTheComms) {
  Build(&comms_);
  auto alice = Login("Alice");
  auto bob = Login("Bob", "town:square");
  alice->Take();
  bob->Take();
  const std::string said = Do("Alice", "ooc anyone for cards?");
  EXPECT_THAT(said, HasSubstr("[ooc] Alice: anyone for cards?"));
  EXPECT_THAT(said, Not(HasSubstr(kOnlyThisShard)));
  EXPECT_THAT(bob->Take(), HasSubstr("[ooc] Alice: anyone for cards?"));
  EXPECT_THAT(comms_.channels,
              ElementsAre(RecordingComms::ChannelCall{"ooc", "Alice", "anyone for cards?"}));
}

TEST_F(WorldHostCommsTest, ChannelTheCommsCannotSendWarnsOnlyTheSpeaker) {
  comms_.channel_sent = false;
  Build(&comms_);
  auto alice = Login("Alice");
  auto bob = Login("Bob", "town:square");
  alice->Take();
  bob->Take();
  const std::string said = Do("Alice", "ooc is anyone out there?");
  EXPECT_THAT(said, HasSubstr("[ooc] Alice: is anyone out there?"));  // still heard here
  EXPECT_THAT(said, HasSubstr(std::string(kOnlyThisShard) +
                              ": the rest of the world cannot be reached right now."));
  const std::string heard = bob->Take();
  EXPECT_THAT(heard, HasSubstr("[ooc] Alice: is anyone out there?"));
  EXPECT_THAT(heard, Not(HasSubstr(kOnlyThisShard)));
  EXPECT_EQ(comms_.channels.size(), 1u);
}

TEST_F(WorldHostCommsTest, ChannelWithoutCommsIsLocalAndWarnsNobody) {
  Build(nullptr);
  Login("Alice")->Take();
  const std::string said = Do("Alice", "ooc hello");
  EXPECT_THAT(said, HasSubstr("[ooc] Alice: hello"));
  EXPECT_THAT(said, Not(HasSubstr(kOnlyThisShard)));
}

// ---------------------------------------------------------------- the far end's entry points

TEST_F(WorldHostCommsTest, DeliverTellReachesALocalPlayerNamesThemAndSetsTheirReply) {
  Build(&comms_);
  auto bob = Login("Bob", "town:square");
  bob->Take();
  std::string name;
  ASSERT_TRUE(host_->DeliverTell("Zed", "bob", "psst", &name).ok());
  EXPECT_EQ(name, "Bob");
  executor_.RunReady();
  EXPECT_THAT(bob->Take(), HasSubstr("Zed tells you, 'psst'"));
  // Zed is on another shard: Bob's reply leaves through the comms.
  Do("Bob", "reply who is this?");
  ASSERT_EQ(comms_.tells.size(), 1u);
  EXPECT_EQ(comms_.tells[0].from, "Bob");
  EXPECT_EQ(comms_.tells[0].to, "Zed");
  EXPECT_EQ(comms_.tells[0].text, "who is this?");
}

TEST_F(WorldHostCommsTest, DeliverTellToSomeoneNotHereIsNotFound) {
  Build(&comms_);
  Login("Alice")->Take();
  std::string name;
  const Status s = host_->DeliverTell("Zed", "carol", "psst", &name);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(name, "");
}

TEST_F(WorldHostCommsTest, DeliverTellToAPlayerWhoseZoneIsStoppingIsUnavailable) {
  Build(&comms_);
  Login("Bob", "town:square")->Take();
  ASSERT_TRUE(host_->StopZone("town", [](std::vector<PlayerTransfer>) {}).ok());
  std::string name;
  const Status s = host_->DeliverTell("Zed", "bob", "psst", &name);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);  // here, but cannot hear: not "not here"
  EXPECT_EQ(name, "Bob");
  executor_.RunReady();
}

TEST_F(WorldHostCommsTest, NotifyReachesOnlyAPlayerHere) {
  Build(&comms_);
  auto bob = Login("Bob", "town:square");
  bob->Take();
  ASSERT_TRUE(host_->Notify("bob", "A gull cries overhead.").ok());
  executor_.RunReady();
  EXPECT_EQ(bob->Take(), "A gull cries overhead.\n");
  EXPECT_EQ(host_->Notify("carol", "hello?").code(), StatusCode::kNotFound);
}

TEST_F(WorldHostCommsTest, DeliverChannelReachesEveryZoneAndIsNotSentOnAgain) {
  Build(&comms_);
  auto alice = Login("Alice");
  auto bob = Login("Bob", "town:square");
  alice->Take();
  bob->Take();
  host_->DeliverChannel("ooc", "Zed", "greetings from afar");
  executor_.RunReady();
  EXPECT_THAT(alice->Take(), HasSubstr("[ooc] Zed: greetings from afar"));
  EXPECT_THAT(bob->Take(), HasSubstr("[ooc] Zed: greetings from afar"));
  // A line from another shard must not go back out: that would loop between the shards.
  EXPECT_THAT(comms_.channels, IsEmpty());
}

// ---------------------------------------------------------------- unread mail at login

TEST_F(WorldHostCommsTest, LoginAnnouncesUnreadLetters) {
  Build(nullptr);
  mail_.boxes["alice"] = {Letter(3, "Bob", false), Letter(2, "Carol", true),
                          Letter(1, "Dan", false)};
  mail_.boxes["bob"] = {Letter(4, "Alice", false)};
  EXPECT_THAT(Login("Alice")->Take(),
              HasSubstr("You have 2 unread letters. Type 'mail' to list them."));
  const std::string bob = Login("Bob")->Take();
  EXPECT_THAT(bob, HasSubstr("You have 1 unread letter. Type 'mail' to list them."));
  EXPECT_THAT(bob, Not(HasSubstr("letters")));
}

TEST_F(WorldHostCommsTest, LoginWithNoUnreadLettersSaysNothingAboutMail) {
  Build(nullptr);
  mail_.boxes["alice"] = {Letter(1, "Bob", true)};
  EXPECT_THAT(Login("Alice")->Take(), Not(HasSubstr("unread")));
  EXPECT_THAT(Login("Bob")->Take(), Not(HasSubstr("unread")));  // an empty box
}

TEST_F(WorldHostCommsTest, LoginSucceedsQuietlyWhenThePostOfficeIsClosed) {
  ScriptedMail closed(ScriptedMail::Mode::kFail);
  Build(nullptr, &closed);
  auto alice = Login("Alice");
  EXPECT_THAT(closed.lists, ElementsAre("alice"));
  EXPECT_THAT(alice->Take(), Not(HasSubstr("unread")));
  EXPECT_EQ(host_->ZoneOf("alice"), "lobby");
}

TEST_F(WorldHostCommsTest, LateUnreadMailAnswerReachesThePlayerWhereverTheyAre) {
  ScriptedMail slow(ScriptedMail::Mode::kDefer);
  Build(nullptr, &slow);
  auto alice = Login("Alice");
  ASSERT_EQ(slow.deferred.size(), 1u);
  EXPECT_THAT(alice->Take(), Not(HasSubstr("unread")));
  Do("Alice", "east");
  ASSERT_EQ(host_->ZoneOf("alice"), "town");
  // The store answers on its own thread.
  std::thread pool([done = slow.deferred[0]] {
    done(std::vector<MailHeader>{{7, "Bob", "hi", 0, false}});
  });
  pool.join();
  executor_.RunReady();
  EXPECT_THAT(alice->Take(), HasSubstr("You have 1 unread letter."));
}

// ---------------------------------------------------------------- PingingMail

struct PingRecord {
  std::vector<std::string> events;  // "done:<status code>" and "ping:<recipient>:<sender>"
  PingingMail::Ping Ping() {
    return [this](const std::string& to, const std::string& from) {
      events.push_back("ping:" + to + ":" + from);
    };
  }
  std::function<void(Status)> Done() {
    return [this](Status s) { events.push_back(s.ok() ? "done:ok" : "done:" + s.ToString()); };
  }
};

TEST(PingingMailTest, PingsTheRecipientAfterTheSenderHeardTheLetterWasAccepted) {
  FakeMail inner;
  inner.boxes["bob"];
  PingRecord record;
  PingingMail mail(inner, record.Ping());
  mail.Send("Alice", "Bob", "cake", "the cake is in the oven", record.Done());
  EXPECT_THAT(record.events, ElementsAre("done:ok", "ping:Bob:Alice"));
  ASSERT_EQ(inner.boxes["bob"].size(), 1u);
  EXPECT_EQ(inner.boxes["bob"][0].body, "the cake is in the oven");
}

TEST(PingingMailTest, ARefusedLetterPingsNobody) {
  FakeMail inner;  // no box for zed: NotFound
  PingRecord record;
  PingingMail mail(inner, record.Ping());
  mail.Send("Alice", "Zed", "hi", "hi", record.Done());
  ASSERT_EQ(record.events.size(), 1u);
  EXPECT_THAT(record.events[0], HasSubstr("done:"));
  EXPECT_NE(record.events[0], "done:ok");
}

// A post office that answers Send later, when the test says so.
class SlowPostOffice final : public MailPort {
 public:
  void Send(std::string, std::string, std::string, std::string,
            std::function<void(Status)> done) override {
    sends.push_back(std::move(done));
  }
  void List(std::string owner, std::function<void(Result<std::vector<MailHeader>>)> done) override {
    lists.push_back(owner);
    done(std::vector<MailHeader>{{9, "Carol", "news", 0, false}});
  }
  void Read(std::string owner, int64_t id, std::function<void(Result<MailMessage>)> done) override {
    reads.push_back(owner + "#" + std::to_string(id));
    done(Letter(id, "Carol", true));
  }
  std::vector<std::function<void(Status)>> sends;
  std::vector<std::string> lists;
  std::vector<std::string> reads;
};

TEST(PingingMailTest, PingWaitsForTheInnerPostOfficeAndRunsOnItsThread) {
  SlowPostOffice inner;
  PingRecord record;
  std::thread::id ping_thread;
  PingingMail mail(inner, [&](const std::string& to, const std::string& from) {
    ping_thread = std::this_thread::get_id();
    record.Ping()(to, from);
  });
  mail.Send("Alice", "Bob", "s", "b", record.Done());
  EXPECT_THAT(record.events, IsEmpty());  // not accepted yet: no ping
  ASSERT_EQ(inner.sends.size(), 1u);
  std::thread store([done = inner.sends[0]] { done(Status::Ok()); });
  const std::thread::id store_thread = store.get_id();
  store.join();
  EXPECT_THAT(record.events, ElementsAre("done:ok", "ping:Bob:Alice"));
  EXPECT_EQ(ping_thread, store_thread);

  // A failure reported later still pings nobody.
  mail.Send("Alice", "Bob", "s", "b", record.Done());
  ASSERT_EQ(inner.sends.size(), 2u);
  inner.sends[1](Status::Unavailable("store down"));
  EXPECT_EQ(record.events.size(), 3u);
  EXPECT_THAT(record.events.back(), HasSubstr("done:"));
  EXPECT_NE(record.events.back(), "done:ok");
}

TEST(PingingMailTest, ListAndReadGoStraightToThePostOffice) {
  SlowPostOffice inner;
  int pings = 0;
  PingingMail mail(inner, [&](const std::string&, const std::string&) { ++pings; });
  std::vector<MailHeader> listed;
  mail.List("bob", [&](Result<std::vector<MailHeader>> r) { listed = *r; });
  std::string read_from;
  mail.Read("bob", 9, [&](Result<MailMessage> r) { read_from = r->header.from; });
  EXPECT_THAT(inner.lists, ElementsAre("bob"));
  EXPECT_THAT(inner.reads, ElementsAre("bob#9"));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].id, 9);
  EXPECT_EQ(read_from, "Carol");
  EXPECT_EQ(pings, 0);
}

TEST(PingingMailTest, PingLineNamesTheSender) {
  EXPECT_EQ(PingingMail::PingLine("Alice"),
            "You have new mail from Alice. Type 'mail' to list your letters.");
}

// Embedded wiring (apps/telos/serve.cc): the ping is a Notify to the recipient in this host.
TEST_F(WorldHostCommsTest, MailSentInTheWorldPingsAnOnlineRecipientOnce) {
  std::vector<std::string> pings;
  PingingMail pinging(mail_, [&](const std::string& to, const std::string& from) {
    pings.push_back(to);
    (void)host_->Notify(NameKey(to), PingingMail::PingLine(from));
  });
  Build(nullptr, &pinging);
  auto alice = Login("Alice");
  auto bob = Login("Bob", "town:square");
  alice->Take();
  bob->Take();
  EXPECT_THAT(Do("Alice", "mail send bob the cake is in the oven"),
              HasSubstr("Your letter to bob is on its way."));
  EXPECT_EQ(Count(bob->Take(), PingingMail::PingLine("Alice")), 1u);
  EXPECT_THAT(Do("Alice", "mail send zed hi"), HasSubstr("Nobody called 'zed'"));
  EXPECT_THAT(pings, ElementsAre("bob"));
  EXPECT_THAT(bob->Take(), Not(HasSubstr("new mail")));
}

}  // namespace
}  // namespace telos::world
