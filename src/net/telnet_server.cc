#include "telos/net/telnet_server.h"

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>

#include "input_limiter.h"
#include "strand_relay.h"

namespace telos::net {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kReadChunkBytes = 2048;

int64_t Nanoseconds(Instant at) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

}  // namespace

class TelnetSession;

struct TelnetServer::Impl : std::enable_shared_from_this<TelnetServer::Impl> {
  Impl(asio::io_context& io_in, TelnetServerOptions opts, TerminalHandlerFactory factory_in,
       const Clock& clock_in, Logger& log_in, Metrics& metrics)
      : io(io_in),
        options(std::move(opts)),
        factory(std::move(factory_in)),
        clock(clock_in),
        log(log_in),
        acceptor(asio::make_strand(io_in)),
        write_watch(acceptor.get_executor()),
        relay(StrandRelay::Create(io_in)),
        connections_gauge(metrics.Gauge("telnet_connections", "Open telnet connections")),
        accepted_total(metrics.Counter("telnet_accepted_total", "Telnet connections accepted")),
        refused_total(metrics.Counter("telnet_refused_total",
                                      "Telnet connections refused by a connection limit")),
        shed_total(metrics.Counter("telnet_shed_total",
                                   "Telnet clients closed because they stopped reading")),
        dropped_lines_total(metrics.Counter("input_lines_dropped_total",
                                            "Input lines dropped by the rate limit")) {}

  asio::awaitable<void> Accept();
  // Cuts off clients whose writes have stalled past the write timeout, every fraction of it.
  asio::awaitable<void> WatchWrites();
  bool Admit(const std::shared_ptr<TelnetSession>& session, const std::string& address);
  void Release(const std::shared_ptr<TelnetSession>& session, const std::string& address);

  asio::io_context& io;
  const TelnetServerOptions options;
  const TerminalHandlerFactory factory;
  MsspProvider mssp;  // options.mssp completed by CompleteMssp; set in Start(), before accepting
  const Clock& clock;
  Logger& log;
  tcp::acceptor acceptor;
  asio::steady_timer write_watch;            // WatchWrites' timer, on the acceptor's strand
  const std::shared_ptr<StrandRelay> relay;  // carries other threads' output onto sessions
  prometheus::Gauge& connections_gauge;
  prometheus::Counter& accepted_total;
  prometheus::Counter& refused_total;
  prometheus::Counter& shed_total;
  prometheus::Counter& dropped_lines_total;

  std::mutex mu;
  std::condition_variable idle;
  std::set<std::shared_ptr<TelnetSession>> sessions;  // guarded by mu
  std::map<std::string, size_t> per_address;          // guarded by mu
  bool accepting = false;                             // guarded by mu
  bool stopping = false;                              // guarded by mu
};

// One telnet connection. Everything below runs on `strand_` except the public Terminal
// methods, which hop onto it.
class TelnetSession final : public Terminal, public std::enable_shared_from_this<TelnetSession> {
 public:
  TelnetSession(std::shared_ptr<TelnetServer::Impl> server, tcp::socket socket, std::string address)
      : server_(std::move(server)),
        socket_(std::move(socket)),
        idle_timer_(socket_.get_executor()),
        relay_lane_(server_->relay->AssignLane()),
        address_(std::move(address)),
        protocol_(server_->options.line_bytes_max, server_->mssp),
        limiter_(server_->options.input_lines_per_second, server_->options.input_lines_burst,
                 server_->clock.Now()),
        last_input_(server_->clock.Now()) {}

  // Tells a connection that was not admitted why, and closes it (it was never started).
  void Refuse(std::string_view reason) {
    boost::system::error_code ec;
    socket_.write_some(asio::buffer(reason.data(), reason.size()), ec);
    socket_.close(ec);
  }

  // Creates the handler and starts reading, on the connection's strand.
  void Start() {
    asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->Run(); });
  }

 private:
  void Run() {
    boost::system::error_code ignored;
    socket_.non_blocking(true, ignored);  // Queue() writes directly when it can
    Queue(protocol_.Greeting());          // negotiation goes out before anything the game says
    handler_ = server_->factory(shared_from_this());
    asio::co_spawn(socket_.get_executor(), ReadLoop(),
                   [self = shared_from_this()](std::exception_ptr) { self->Finish(); });
    asio::co_spawn(socket_.get_executor(), IdleWatch(), asio::detached);
  }

 public:
  // --- Terminal
  void SendText(std::string text) override {
    OnStrand([this, text = std::move(text)] { Queue(protocol_.Text(text)); });
  }
  void SendPrompt(std::string text) override {
    OnStrand([this, text = std::move(text)] { Queue(protocol_.Prompt(text)); });
  }
  void SendData(std::string package, std::string json) override {
    OnStrand([this, package = std::move(package), json = std::move(json)] {
      Queue(protocol_.Gmcp(package, json));
    });
  }
  void SendOutput(TerminalOutput output) override {
    OnStrand([this, output = std::move(output)] {
      std::string bytes = output.text.empty() ? std::string() : protocol_.Text(output.text);
      for (const auto& [package, json] : output.data) bytes += protocol_.Gmcp(package, json);
      if (!output.prompt.empty()) bytes += protocol_.Prompt(output.prompt);
      Queue(std::move(bytes));
    });
  }
  void SetEcho(bool on) override {
    OnStrand([this, on] { Queue(protocol_.Echo(on)); });
  }
  void SetColourDepth(std::optional<ColourDepth> depth) override {
    OnStrand([this, depth] {
      protocol_.SetColourDepthOverride(depth);
      std::lock_guard lock(info_mu_);
      info_.colour_depth = protocol_.colour_depth();
    });
  }
  void Close(std::string reason) override {
    OnStrand([this, reason = std::move(reason)] {
      if (!reason.empty()) Queue(protocol_.Text(reason + "\n"));
      BeginClose(reason.empty() ? "closed" : reason);
    });
  }
  TerminalInfo Info() const override {
    std::lock_guard lock(info_mu_);
    return info_;
  }

 private:
  template <typename F>
  void OnStrand(F&& f) {
    RelayKeepingAlive(*server_->relay, relay_lane_, socket_.get_executor(), shared_from_this(),
                      std::forward<F>(f));
  }

  asio::awaitable<void> ReadLoop() {
    char buf[kReadChunkBytes];
    std::string reply;
    for (;;) {
      auto [ec, n] = co_await socket_.async_read_some(asio::buffer(buf), kTuple);
      if (ec) break;
      last_input_ = server_->clock.Now();
      reply.clear();
      TelnetInput input = protocol_.Receive(std::string_view(buf, n), reply);
      if (!reply.empty()) Queue(std::move(reply));
      if (input.window_size_changed || input.terminal_type_changed) {
        {
          std::lock_guard lock(info_mu_);
          info_.width = protocol_.width();
          info_.height = protocol_.height();
          const TerminalCapabilities& caps = protocol_.capabilities();
          info_.client = protocol_.client_name();
          info_.terminal_type = caps.terminal_type;
          info_.mtts_bits = caps.mtts ? caps.mtts_bits : 0;
          info_.screen_reader = caps.Has(mtts::kScreenReader);
          info_.colour_depth = protocol_.colour_depth();
          info_.charset = std::string(CharsetName(protocol_.charset()));
        }
        if (input.window_size_changed && handler_) {
          handler_->OnResize(protocol_.width(), protocol_.height());
        }
      }
      for (auto& msg : input.gmcp) {
        if (handler_ && !closing_) handler_->OnData(std::move(msg.package), std::move(msg.json));
      }
      for (auto& line : input.lines) {
        if (closing_ || !handler_) break;
        if (!TakeToken()) {
          server_->dropped_lines_total.Increment();
          if (!told_rate_limited_) {
            told_rate_limited_ = true;
            Queue(
                protocol_.Text("You are typing faster than the world can listen; "
                               "some input was dropped.\n"));
          }
          continue;
        }
        handler_->OnLine(std::move(line.text), line.truncated);
      }
    }
  }

  // Closes the connection once no input has arrived for the idle timeout.
  asio::awaitable<void> IdleWatch() {
    auto self = shared_from_this();
    const auto limit = std::chrono::milliseconds(server_->options.idle_timeout_ms);
    while (!finished_) {
      const auto idle_for = server_->clock.Now() - last_input_;
      if (idle_for >= limit) {
        Queue(protocol_.Text("\nYou have been idle too long. Goodbye.\n"));
        BeginClose("idle timeout");
        co_return;
      }
      idle_timer_.expires_after(limit - idle_for);
      auto [ec] = co_await idle_timer_.async_wait(kTuple);
      if (ec) co_return;
    }
  }

  bool TakeToken() {
    if (!limiter_.Take(server_->clock.Now())) return false;
    if (limiter_.Recovered()) told_rate_limited_ = false;
    return true;
  }

  void Queue(std::string bytes) {
    if (bytes.empty() || socket_closed_) return;
    if (!writing_) {
      // Nothing is in flight, so order is kept by writing at once; most flushes fit in the
      // socket buffer and need no asynchronous write at all. What does not fit is queued.
      boost::system::error_code ec;
      const size_t sent = socket_.write_some(asio::buffer(bytes), ec);
      if (ec && ec != asio::error::would_block && ec != asio::error::try_again) {
        CloseSocket();
        return;
      }
      if (!ec && sent == bytes.size()) return;
      if (!ec) bytes.erase(0, sent);
    }
    outbox_bytes_ += bytes.size();
    if (outbox_bytes_ > server_->options.pending_write_bytes_max) {
      server_->shed_total.Increment();
      server_->log.Warn("slow telnet client shed",
                        {{"address", address_}, {"pending_bytes", outbox_bytes_}});
      outbox_.clear();
      outbox_bytes_ = 0;
      close_reason_ = "output backlog";
      CloseSocket();
      return;
    }
    outbox_.push_back(std::move(bytes));
    if (!writing_) {
      writing_ = true;
      asio::co_spawn(socket_.get_executor(), WriteLoop(), asio::detached);
    }
  }

  asio::awaitable<void> WriteLoop() {
    auto self = shared_from_this();
    while (!outbox_.empty() && !socket_closed_) {
      std::string batch;
      if (outbox_.size() == 1) {
        batch = std::move(outbox_.front());
      } else {
        batch.reserve(outbox_bytes_);
        for (auto& piece : outbox_) batch += piece;
      }
      outbox_.clear();
      outbox_bytes_ = 0;
      // The server's write watch cuts off a client that accepts no bytes for the write
      // timeout; it reads this stamp instead of each write arming a timer of its own.
      write_started_ns_.store(Nanoseconds(server_->clock.Now()), std::memory_order_relaxed);
      auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(batch), kTuple);
      write_started_ns_.store(0, std::memory_order_relaxed);
      if (ec) {
        CloseSocket();
        break;
      }
    }
    writing_ = false;
    if (closing_ && outbox_.empty()) CloseSocket();
  }

 public:
  // Called by the server's write watch from any thread: closes the connection if one write
  // has been waiting for the client longer than the write timeout.
  void CheckWriteStall(int64_t now_ns, int64_t timeout_ns) {
    const int64_t started = write_started_ns_.load(std::memory_order_relaxed);
    if (started == 0 || now_ns - started <= timeout_ns) return;
    OnStrand([this, started] {
      if (write_started_ns_.load(std::memory_order_relaxed) != started) return;  // it moved on
      if (close_reason_.empty()) close_reason_ = "write timeout";
      CloseSocket();
    });
  }

 private:
  void BeginClose(std::string reason) {
    if (closing_) return;
    closing_ = true;
    close_reason_ = std::move(reason);
    if (!writing_) CloseSocket();  // otherwise the writer closes after flushing
  }

  void CloseSocket() {
    if (socket_closed_) return;
    socket_closed_ = true;
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    idle_timer_.cancel();
  }

  void Finish() {
    CloseSocket();
    finished_ = true;
    if (handler_) {
      handler_->OnClosed(close_reason_.empty() ? "connection closed" : close_reason_);
      handler_.reset();
    }
    server_->Release(shared_from_this(), address_);
  }

  std::shared_ptr<TelnetServer::Impl> server_;
  tcp::socket socket_;
  asio::steady_timer idle_timer_;
  const size_t relay_lane_;
  const std::string address_;
  TelnetConnection protocol_;
  std::unique_ptr<TerminalHandler> handler_;
  std::deque<std::string> outbox_;
  size_t outbox_bytes_ = 0;
  bool writing_ = false;
  std::atomic<int64_t> write_started_ns_{0};  // when the write in flight began; 0: none
  bool closing_ = false;
  bool socket_closed_ = false;
  bool finished_ = false;
  bool told_rate_limited_ = false;
  std::string close_reason_;
  InputRateLimiter limiter_;
  Instant last_input_;
  mutable std::mutex info_mu_;  // Info() is read from other threads
  TerminalInfo info_{"telnet", address_, "", 0, 0};
};

bool TelnetServer::Impl::Admit(const std::shared_ptr<TelnetSession>& session,
                               const std::string& address) {
  std::lock_guard lock(mu);
  if (stopping) return false;
  if (sessions.size() >= options.connections_max) return false;
  size_t& n = per_address[address];
  if (n >= options.connections_per_address_max) {
    if (n == 0) per_address.erase(address);
    return false;
  }
  ++n;
  // Counted and listed in one step, so Stop() either refuses it or sees it.
  sessions.insert(session);
  connections_gauge.Set(static_cast<double>(sessions.size()));
  return true;
}

void TelnetServer::Impl::Release(const std::shared_ptr<TelnetSession>& session,
                                 const std::string& address) {
  std::lock_guard lock(mu);
  sessions.erase(session);
  if (auto it = per_address.find(address); it != per_address.end() && --it->second == 0) {
    per_address.erase(it);
  }
  connections_gauge.Set(static_cast<double>(sessions.size()));
  idle.notify_all();
}

asio::awaitable<void> TelnetServer::Impl::WatchWrites() {
  auto self = shared_from_this();
  const auto timeout = std::chrono::milliseconds(options.write_timeout_ms);
  const auto period =
      std::clamp(timeout / 4, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
  std::vector<std::shared_ptr<TelnetSession>> open;
  for (;;) {
    write_watch.expires_after(period);
    auto [ec] = co_await write_watch.async_wait(kTuple);
    if (ec) co_return;
    {
      std::lock_guard lock(mu);
      if (stopping && sessions.empty()) co_return;
      open.assign(sessions.begin(), sessions.end());
    }
    const int64_t now_ns = Nanoseconds(clock.Now());
    const int64_t timeout_ns = std::chrono::nanoseconds(timeout).count();
    for (const auto& session : open) session->CheckWriteStall(now_ns, timeout_ns);
    open.clear();
  }
}

asio::awaitable<void> TelnetServer::Impl::Accept() {
  auto self = shared_from_this();
  asio::steady_timer backoff(acceptor.get_executor());
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(asio::make_strand(io), kTuple);
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) break;
    if (ec) {
      log.Warn("telnet accept failed", {{"error", ec.message()}});
      backoff.expires_after(std::chrono::milliseconds(50));
      co_await backoff.async_wait(kTuple);
      continue;
    }
    boost::system::error_code addr_ec;
    const std::string address = socket.remote_endpoint(addr_ec).address().to_string();
    if (addr_ec) {
      socket.close(addr_ec);
      continue;
    }
    // Interactive text: a reply must not wait for the client's delayed ACK of the previous one
    // (Nagle), which costs 40 ms whenever two writes follow each other closely.
    socket.set_option(asio::ip::tcp::no_delay(true), addr_ec);
    auto session = std::make_shared<TelnetSession>(self, std::move(socket), address);
    if (!Admit(session, address)) {
      refused_total.Increment();
      // A short, plain refusal: the client learns why instead of seeing a silent hang-up.
      session->Refuse("Too many connections; try again later.\r\n");
      continue;
    }
    accepted_total.Increment();
    session->Start();
  }
}

}  // namespace telos::net

namespace telos::net {

TelnetServer::TelnetServer(boost::asio::io_context& io, TelnetServerOptions options,
                           TerminalHandlerFactory factory, const Clock& clock, Logger& log,
                           Metrics& metrics)
    : impl_(std::make_shared<Impl>(io, std::move(options), std::move(factory), clock, log,
                                   metrics)) {}

TelnetServer::~TelnetServer() {
  Stop();
}

Result<uint16_t> TelnetServer::Start() {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(impl_->options.bind_address, ec);
  if (ec) return Status::InvalidArgument("bad bind address '" + impl_->options.bind_address + "'");
  const tcp::endpoint endpoint(address, impl_->options.port);
  const std::string where = impl_->options.bind_address + ":" + std::to_string(impl_->options.port);
  auto& acceptor = impl_->acceptor;
  if (acceptor.open(endpoint.protocol(), ec); ec) {
    return Status::Unavailable("cannot open telnet socket " + where + ": " + ec.message());
  }
  acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (acceptor.bind(endpoint, ec); ec) {
    const std::string why = ec.message();
    acceptor.close(ec);  // keeps `why`: close() resets ec
    return Status::Unavailable("cannot bind telnet " + where + ": " + why);
  }
  if (acceptor.listen(limits::kListenBacklog, ec); ec) {
    const std::string why = ec.message();
    acceptor.close(ec);  // keeps `why`: close() resets ec
    return Status::Unavailable("cannot listen on telnet " + where + ": " + why);
  }
  const uint16_t port = acceptor.local_endpoint().port();
  if (impl_->options.mssp) {
    const int64_t started_s =
        std::chrono::duration_cast<std::chrono::seconds>(impl_->clock.WallNow().time_since_epoch())
            .count();
    impl_->mssp = [game = impl_->options.mssp, settings = impl_->options.mssp_settings, started_s,
                   port] { return CompleteMssp(game(), settings, started_s, port); };
  }
  {
    std::lock_guard lock(impl_->mu);
    impl_->accepting = true;
  }
  asio::co_spawn(acceptor.get_executor(), impl_->Accept(), [impl = impl_](std::exception_ptr) {
    std::lock_guard lock(impl->mu);
    impl->accepting = false;
    impl->idle.notify_all();
  });
  asio::co_spawn(acceptor.get_executor(), impl_->WatchWrites(), asio::detached);
  impl_->log.Info("telnet listening",
                  {{"address", impl_->options.bind_address}, {"port", static_cast<int64_t>(port)}});
  return port;
}

void TelnetServer::Stop() {
  auto impl = impl_;
  std::vector<std::shared_ptr<TelnetSession>> open;
  bool accepting;
  {
    std::lock_guard lock(impl->mu);
    if (impl->stopping) return;
    impl->stopping = true;
    accepting = impl->accepting;
    open.assign(impl->sessions.begin(), impl->sessions.end());
  }
  if (accepting) {
    asio::post(impl->acceptor.get_executor(), [impl] {
      boost::system::error_code ignored;
      impl->acceptor.close(ignored);
    });
  } else {
    boost::system::error_code ignored;
    impl->acceptor.close(ignored);
  }
  // Sessions flush what they have queued (bounded by the write timeout), then close.
  for (auto& session : open) session->Close("");
  if (impl->io.stopped()) return;
  {
    std::unique_lock lock(impl->mu);
    impl->idle.wait(lock, [&] { return !impl->accepting && impl->sessions.empty(); });
  }
  // Every session is gone: the write watch has nothing left to watch.
  asio::post(impl->acceptor.get_executor(), [impl] { impl->write_watch.cancel(); });
}

size_t TelnetServer::connections() const {
  std::lock_guard lock(impl_->mu);
  return impl_->sessions.size();
}

}  // namespace telos::net
