// StoreSocial: the world's SocialPort (telos/world/ports.h) on the character store's
// SocialStore, with who is online read from the directory's presence roster (the same roster
// tells and mail pings consult; DESIGN.md invariant 7: it never routes, it only shows).
//
// Every request runs on the BlockingRunner (the store and the directory block) and answers
// once from there. A presence read that fails shows the person as offline rather than failing
// the listing.
//
// Thread safety: Ask may be called from any thread; the store and the directory must outlive
// the last answer (the world process stops its zones before it destroys them).
#pragma once

#include "telos/base/blocking.h"
#include "telos/directory/directory.h"
#include "telos/store/social_store.h"
#include "telos/world/ports.h"

namespace telos::shard {

class StoreSocial final : public world::SocialPort {
 public:
  StoreSocial(store::SocialStore& store, directory::Directory& directory, BlockingRunner blocking)
      : store_(store), directory_(directory), blocking_(std::move(blocking)) {}

  void Ask(world::SocialRequest request, std::function<void(world::SocialAnswer)> done) override;

  // The answer to `request`, computed on the calling thread (blocks).
  world::SocialAnswer AnswerNow(const world::SocialRequest& request);

 private:
  bool Online(const std::string& name);

  store::SocialStore& store_;
  directory::Directory& directory_;
  const BlockingRunner blocking_;
};

}  // namespace telos::shard
