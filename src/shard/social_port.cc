#include "telos/shard/social_port.h"

#include "telos/world/names.h"

namespace telos::shard {

using Op = world::SocialRequest::Op;

void StoreSocial::Ask(world::SocialRequest request, std::function<void(world::SocialAnswer)> done) {
  blocking_(
      [this, request = std::move(request), done = std::move(done)] { done(AnswerNow(request)); });
}

bool StoreSocial::Online(const std::string& name) {
  auto presence = directory_.GetPresence(world::NameKey(name));
  return presence.ok() && presence->has_value();
}

world::SocialAnswer StoreSocial::AnswerNow(const world::SocialRequest& request) {
  world::SocialAnswer answer;
  const std::string& who = request.character;
  switch (request.op) {
    case Op::kGuildCreate: {
      auto created = store_.CreateGuild(request.arg, who);
      answer.status = created.status();
      if (created.ok()) answer.guild = *created;
      break;
    }
    case Op::kGuildInfo: {
      auto roster = store_.GuildOf(who);
      answer.status = roster.status();
      if (roster.ok() && roster->has_value()) {
        answer.guild = (*roster)->guild;
        answer.rank = std::string(store::GuildRankName((*roster)->rank));
        for (const store::GuildMember& member : (*roster)->members) {
          answer.people.push_back(
              {member.name, std::string(store::GuildRankName(member.rank)), Online(member.name)});
        }
      }
      break;
    }
    case Op::kGuildInvite: {
      answer.status = store_.InviteToGuild(who, request.arg);
      if (answer.status.ok()) {
        auto roster = store_.GuildOf(who);
        if (roster.ok() && roster->has_value()) answer.guild = (*roster)->guild;
      }
      break;
    }
    case Op::kGuildJoin: {
      auto joined = store_.JoinGuild(who, request.arg);
      answer.status = joined.status();
      if (joined.ok()) answer.guild = *joined;
      break;
    }
    case Op::kGuildLeave: answer.status = store_.LeaveGuild(who); break;
    case Op::kGuildKick: answer.status = store_.RemoveFromGuild(who, request.arg); break;
    case Op::kGuildPromote:
      answer.status = store_.SetGuildRank(who, request.arg, store::GuildRank::kOfficer);
      break;
    case Op::kGuildDemote:
      answer.status = store_.SetGuildRank(who, request.arg, store::GuildRank::kMember);
      break;
    case Op::kFriendAdd: answer.status = store_.AddFriend(who, request.arg); break;
    case Op::kFriendRemove: answer.status = store_.RemoveFriend(who, request.arg); break;
    case Op::kFriendList: {
      auto friends = store_.Friends(who);
      answer.status = friends.status();
      if (friends.ok()) {
        for (const std::string& name : *friends) answer.people.push_back({name, "", Online(name)});
      }
      break;
    }
    case Op::kLocaleSet: {
      answer.status = store_.SetLocale(who, request.arg);
      if (answer.status.ok()) {
        auto normalized = store::NormalizeLocale(request.arg);
        if (normalized.ok()) answer.locale = *normalized;
      }
      break;
    }
    case Op::kLocaleGet: {
      auto locale = store_.LocaleOf(who);
      answer.status = locale.status();
      if (locale.ok()) answer.locale = *locale;
      break;
    }
  }
  return answer;
}

}  // namespace telos::shard
