#include "telos/auth/keys.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <system_error>
#include <utility>

#include "crypto_util.h"
#include "telos/base/assert.h"

namespace telos::auth {

static_assert(crypto_sign_SEEDBYTES == kSeedBytes);
static_assert(crypto_sign_PUBLICKEYBYTES == kPublicKeyBytes);
static_assert(crypto_sign_BYTES == kSignatureBytes);
static_assert(crypto_sign_SECRETKEYBYTES == 64);

namespace internal {

void EnsureSodium() {
  // sodium_init() is itself safe to call from several threads; the static makes it run once and
  // lets every later call skip it.
  static const bool initialised = sodium_init() >= 0;
  RELEASE_ASSERT(initialised, "libsodium failed to initialise");
}

std::string HexEncode(const unsigned char* data, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 0x0f]);
  }
  return out;
}

}  // namespace internal

namespace {

// A key file is one line of 64 hex digits; anything much larger is not a key file.
constexpr size_t kKeyFileBytesMax = limits::kKeyFileBytesMax;

// -1 unless `c` is a hex digit (either case).
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes exactly out.size() bytes from 2 * out.size() hex digits; false on any other input.
template <size_t N>
bool HexDecode(std::string_view hex, std::array<unsigned char, N>& out) {
  if (hex.size() != 2 * N) return false;
  for (size_t i = 0; i < N; ++i) {
    const int hi = HexValue(hex[2 * i]);
    const int lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<unsigned char>((hi << 4) | lo);
  }
  return true;
}

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

std::string ErrnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// Closes a file descriptor on every path out of a scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const { return fd_; }
  // Closes now and reports the result (close can report a failed deferred write).
  bool Close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }

 private:
  int fd_;
};

// Reads a key file and strips its trailing whitespace. When `secret`, the file must not grant
// any permission to group or others: a signing key readable by other users is a leaked key.
Result<std::string> ReadKeyFile(const std::string& path, bool secret) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ENOENT) return Status::NotFound(path + ": no such key file");
    return Status::InvalidArgument(path + ": cannot open: " + ErrnoText(error));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    const int error = errno;
    return Status::InvalidArgument(path + ": cannot stat: " + ErrnoText(error));
  }
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(path + ": not a regular file");
  if (secret && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return Status::InvalidArgument(path +
                                   ": signing key must not be readable by others (chmod 600)");
  }
  if (static_cast<uint64_t>(st.st_size) > kKeyFileBytesMax) {
    return Status::InvalidArgument(path + ": too large for a key file");
  }
  std::string text(kKeyFileBytesMax + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      sodium_memzero(text.data(), text.size());
      return Status::InvalidArgument(path + ": cannot read: " + ErrnoText(error));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kKeyFileBytesMax) {
    sodium_memzero(text.data(), text.size());
    return Status::InvalidArgument(path + ": too large for a key file");
  }
  while (got > 0 && (text[got - 1] == '\n' || text[got - 1] == '\r' || text[got - 1] == ' ' ||
                     text[got - 1] == '\t')) {
    --got;
  }
  text.resize(got);
  return text;
}

// Creates `path` (it must not exist) with exactly `mode`, writes `contents` and syncs it. On a
// failure after the file was created, the partial file is removed.
Status WriteNewFile(const std::string& path, std::string_view contents, mode_t mode) {
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == EEXIST) {
      return Status::AlreadyExists(path + ": already exists (keys are never overwritten)");
    }
    return Status::InvalidArgument(path + ": cannot create: " + ErrnoText(error));
  }
  const auto fail = [&path](const char* what, int error) {
    ::unlink(path.c_str());
    return Status::InvalidArgument(path + ": cannot " + what + ": " + ErrnoText(error));
  };
  // The umask may have removed bits from `mode`; the file must have exactly `mode`.
  if (::fchmod(fd.get(), mode) != 0) return fail("chmod", errno);
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd.get(), contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("write", errno);
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail("sync", errno);
  if (!fd.Close()) return fail("close", errno);
  return Status::Ok();
}

}  // namespace

// ------------------------------------------------------------------ VerifyKey

VerifyKey::VerifyKey() {
  SetId();
}

void VerifyKey::SetId() {
  internal::EnsureSodium();
  // BLAKE2b's shortest output is 16 bytes; the id keeps the first half of it.
  std::array<unsigned char, crypto_generichash_BYTES_MIN> hash{};
  const int rc = crypto_generichash(hash.data(), hash.size(), public_key_.data(),
                                    public_key_.size(), nullptr, 0);
  RELEASE_ASSERT(rc == 0, "crypto_generichash failed");
  static_assert(kKeyIdChars % 2 == 0 && kKeyIdChars / 2 <= crypto_generichash_BYTES_MIN);
  id_ = internal::HexEncode(hash.data(), kKeyIdChars / 2);
}

Result<VerifyKey> VerifyKey::FromHex(std::string_view hex) {
  VerifyKey key;
  if (!HexDecode(hex, key.public_key_)) {
    return Status::InvalidArgument("a verify key must be exactly 64 hex digits");
  }
  key.SetId();
  return key;
}

Result<VerifyKey> VerifyKey::LoadFile(const std::string& path) {
  auto text = ReadKeyFile(path, /*secret=*/false);
  if (!text.ok()) return text.status();
  auto key = FromHex(*text);
  if (!key.ok()) return Status::InvalidArgument(path + ": " + key.status().message());
  return key;
}

std::string VerifyKey::Hex() const {
  return internal::HexEncode(public_key_.data(), public_key_.size());
}

bool VerifyKey::Verify(std::string_view message, std::string_view signature) const {
  if (signature.size() != kSignatureBytes) return false;
  internal::EnsureSodium();
  return crypto_sign_verify_detached(Bytes(signature), Bytes(message), message.size(),
                                     public_key_.data()) == 0;
}

// ------------------------------------------------------------------ KeyRing

KeyRing::KeyRing(const VerifyKey& current) : current_(current) {}

KeyRing::KeyRing(const VerifyKey& current, std::optional<VerifyKey> previous)
    : current_(current), previous_(std::move(previous)) {
  if (previous_ && previous_->id() == current_.id()) previous_.reset();
}

const VerifyKey* KeyRing::Find(std::string_view key_id) const {
  if (key_id == current_.id()) return &current_;
  if (previous_ && key_id == previous_->id()) return &*previous_;
  return nullptr;
}

std::string KeyRing::Ids() const {
  return previous_ ? current_.id() + ", " + previous_->id() : current_.id();
}

Result<std::optional<VerifyKey>> VerifyKeyFromConfig(const Config& config,
                                                     std::string_view variable) {
  auto text = config.Secret(variable, "");
  if (!text.ok()) return text.status();
  std::string_view hex = *text;
  while (!hex.empty() &&
         (hex.back() == '\n' || hex.back() == '\r' || hex.back() == ' ' || hex.back() == '\t')) {
    hex.remove_suffix(1);
  }
  if (hex.empty()) return std::optional<VerifyKey>();
  auto key = VerifyKey::FromHex(hex);
  if (!key.ok()) {
    return Status::InvalidArgument(std::string(variable) + " (or " + std::string(variable) +
                                   "_FILE): " + key.status().message());
  }
  return std::optional<VerifyKey>(*key);
}

// ------------------------------------------------------------------ SigningKey

SigningKey SigningKey::Generate() {
  internal::EnsureSodium();
  SigningKey key;
  const int rc = crypto_sign_keypair(key.verify_.public_key_.data(), key.secret_key_.data());
  RELEASE_ASSERT(rc == 0, "crypto_sign_keypair failed");
  key.verify_.SetId();
  return key;
}

Result<SigningKey> SigningKey::FromSeedHex(std::string_view hex) {
  std::array<unsigned char, kSeedBytes> seed{};
  if (!HexDecode(hex, seed)) {
    sodium_memzero(seed.data(), seed.size());
    return Status::InvalidArgument("a signing key seed must be exactly 64 hex digits");
  }
  internal::EnsureSodium();
  SigningKey key;
  const int rc =
      crypto_sign_seed_keypair(key.verify_.public_key_.data(), key.secret_key_.data(), seed.data());
  sodium_memzero(seed.data(), seed.size());
  RELEASE_ASSERT(rc == 0, "crypto_sign_seed_keypair failed");
  key.verify_.SetId();
  return key;
}

Result<SigningKey> SigningKey::LoadFile(const std::string& path) {
  auto text = ReadKeyFile(path, /*secret=*/true);
  if (!text.ok()) return text.status();
  auto key = FromSeedHex(*text);
  sodium_memzero(text->data(), text->size());
  if (!key.ok()) return Status::InvalidArgument(path + ": " + key.status().message());
  return key;
}

Status SigningKey::WriteFiles(const std::string& dir, const std::string& name) const {
  if (name.empty() || name == "." || name == ".." ||
      name.find_first_of(std::string_view("/\0", 2)) != std::string::npos) {
    return Status::InvalidArgument("key name '" + name + "' must be a plain file name");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::InvalidArgument(dir + ": cannot create directory: " + ec.message());

  const std::string key_path = (std::filesystem::path(dir) / (name + ".key")).string();
  const std::string pub_path = (std::filesystem::path(dir) / (name + ".pub")).string();
  // Refuse before writing anything, so an existing pair is never half-replaced.
  for (const std::string& path : {key_path, pub_path}) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
      return Status::AlreadyExists(path + ": already exists (keys are never overwritten)");
    }
    const int error = errno;
    if (error != ENOENT) {
      return Status::InvalidArgument(path + ": cannot stat: " + ErrnoText(error));
    }
  }

  std::string seed_line = SeedHex() + "\n";
  Status written = WriteNewFile(key_path, seed_line, 0600);
  sodium_memzero(seed_line.data(), seed_line.size());
  TELOS_RETURN_IF_ERROR(written);
  written = WriteNewFile(pub_path, verify_.Hex() + "\n", 0644);
  if (!written.ok()) {
    // This call created the signing key file a moment ago; without its public half it is
    // useless, and leaving it would make a retry fail with AlreadyExists.
    ::unlink(key_path.c_str());
    return written;
  }
  // Make the new directory entries durable too. Best effort: both files are complete already.
  FileDescriptor dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() >= 0) ::fsync(dir_fd.get());
  return Status::Ok();
}

std::string SigningKey::SeedHex() const {
  std::array<unsigned char, kSeedBytes> seed{};
  crypto_sign_ed25519_sk_to_seed(seed.data(), secret_key_.data());
  std::string hex = internal::HexEncode(seed.data(), seed.size());
  sodium_memzero(seed.data(), seed.size());
  return hex;
}

std::string SigningKey::Sign(std::string_view message) const {
  internal::EnsureSodium();
  std::string signature(kSignatureBytes, '\0');
  const int rc = crypto_sign_detached(reinterpret_cast<unsigned char*>(signature.data()), nullptr,
                                      Bytes(message), message.size(), secret_key_.data());
  RELEASE_ASSERT(rc == 0, "crypto_sign_detached failed");
  return signature;
}

// ------------------------------------------------------------------ rotation

namespace {

// Whether `path` names anything (a dangling symlink included); an error other than "no such
// file" is reported rather than guessed at.
Result<bool> PathExists(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return true;
  const int error = errno;
  if (error == ENOENT) return false;
  return Status::InvalidArgument(path + ": cannot stat: " + ErrnoText(error));
}

Status RenameReplacing(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    const int error = errno;
    return Status::InvalidArgument("cannot rename " + from + " to " + to + ": " + ErrnoText(error));
  }
  return Status::Ok();
}

}  // namespace

Result<KeyRotation> RotateKeyFiles(const std::string& dir, const std::string& name) {
  const auto path = [&dir](const std::string& file) {
    return (std::filesystem::path(dir) / file).string();
  };
  const std::string key_path = path(name + ".key");
  const std::string pub_path = path(name + ".pub");
  const std::string previous_key_path = path(name + ".previous.key");
  const std::string previous_pub_path = path(name + ".previous.pub");
  const std::string next_name = name + ".next";

  // The pair in service must be whole and consistent: retiring a public key that is not the
  // signer's would leave the fleet accepting a key nobody signs with and refusing the one in use.
  auto current = SigningKey::LoadFile(key_path);
  if (!current.ok()) {
    if (current.status().code() == StatusCode::kNotFound) {
      return Status::NotFound(key_path + ": no key pair to rotate (make one without --rotate)");
    }
    return current.status();
  }
  auto current_pub = VerifyKey::LoadFile(pub_path);
  if (!current_pub.ok()) return current_pub.status();
  if (current_pub->id() != current->id()) {
    return Status::FailedPrecondition(pub_path + " (key id " + current_pub->id() +
                                      ") is not the public half of " + key_path + " (key id " +
                                      current->id() + ")");
  }

  // The renames below replace the `.previous` names; one that is not a file (a directory, say)
  // would stop the rotation halfway, with the key in service already moved off its name.
  for (const std::string& target : {previous_key_path, previous_pub_path}) {
    struct stat st {};
    if (::lstat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
      return Status::FailedPrecondition(target + ": not a key file (move it away to rotate)");
    }
  }

  KeyRotation rotation;
  rotation.previous_id = current->id();
  auto had_previous = PathExists(previous_pub_path);
  if (!had_previous.ok()) return had_previous.status();
  if (*had_previous) {
    // Only to report which key stops working; an unreadable file is replaced all the same.
    if (auto dropped = VerifyKey::LoadFile(previous_pub_path); dropped.ok()) {
      rotation.dropped_id = dropped->id();
    } else {
      rotation.dropped_id = "unreadable";
    }
  }

  // The new pair is written whole under a temporary name first, so no step below can leave a
  // half-written key under a name the fleet reads. WriteFiles refuses an existing `.next` pair.
  const SigningKey fresh = SigningKey::Generate();
  TELOS_RETURN_IF_ERROR(fresh.WriteFiles(dir, next_name));
  rotation.current_id = fresh.id();

  // Each rename within one directory is atomic and replaces its target. Between two of them a
  // name may be missing for a moment; that is harmless because processes read their keys only
  // at start, and the operator restarts them after this returns.
  // A failed step undoes the ones before it (best effort), so the pair in service keeps its
  // plain names and no new pair is left under `.next`; what the first two steps replaced (the
  // old `.previous` files, the pair a verifier accepts as previous) may be gone.
  const std::string next_key_path = path(next_name + ".key");
  const std::string next_pub_path = path(next_name + ".pub");
  const std::pair<const std::string*, const std::string*> steps[] = {
      {&key_path, &previous_key_path},
      {&pub_path, &previous_pub_path},
      {&next_key_path, &key_path},
      {&next_pub_path, &pub_path}};
  for (size_t done = 0; done < std::size(steps); ++done) {
    Status renamed = RenameReplacing(*steps[done].first, *steps[done].second);
    if (renamed.ok()) continue;
    while (done > 0) {
      --done;
      ::rename(steps[done].second->c_str(), steps[done].first->c_str());
    }
    ::unlink(next_key_path.c_str());
    ::unlink(next_pub_path.c_str());
    return renamed;
  }
  FileDescriptor dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() >= 0) ::fsync(dir_fd.get());
  return rotation;
}

}  // namespace telos::auth
