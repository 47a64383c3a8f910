// The production executor: an asio strand, with one steady_timer per PostAt.
#include "telos/world/asio_executor.h"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

namespace telos::world {
namespace {

class StrandExecutor final : public Executor {
 public:
  explicit StrandExecutor(boost::asio::io_context& io)
      : io_(io), strand_(boost::asio::make_strand(io)) {}

  void Post(std::function<void()> task) override { boost::asio::post(strand_, std::move(task)); }

  void PostAt(Instant deadline, std::function<void()> task) override {
    auto timer = std::make_shared<boost::asio::steady_timer>(io_, deadline);
    timer->async_wait(boost::asio::bind_executor(
        strand_, [timer, task = std::move(task)](const boost::system::error_code&) { task(); }));
  }

 private:
  boost::asio::io_context& io_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
};

}  // namespace

std::shared_ptr<Executor> MakeStrandExecutor(boost::asio::io_context& io) {
  return std::make_shared<StrandExecutor>(io);
}

}  // namespace telos::world
