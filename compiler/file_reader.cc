#include "file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

namespace nemoc {

namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string SpecialFileReason(mode_t mode) {
  if (S_ISFIFO(mode)) return "is a named pipe (FIFO)";
  if (S_ISSOCK(mode)) return "is a socket";
  if (S_ISCHR(mode)) return "is a character device";
  if (S_ISBLK(mode)) return "is a block device";
  if (S_ISDIR(mode)) return "is a directory";
  return "is a special file";
}

}  // namespace

bool FileReader::Read(const std::string& path, size_t max_bytes, std::string* contents,
                      std::string* err) {
  Failure failure;
  switch (ReadFile(path, max_bytes, contents, &failure)) {
    case Status::kOkay: return true;
    case Status::kNotFound: *err = path + " does not exist"; break;
    case Status::kIsDirectory: *err = path + " is a directory, not a file"; break;
    case Status::kNotRegular: *err = path + " " + failure.reason + ", not a regular file"; break;
    case Status::kTooLarge:
      *err = path + " is larger than the limit of " + std::to_string(max_bytes) + " bytes";
      break;
    case Status::kError: *err = failure.action + " " + path + ": " + failure.reason; break;
  }
  return false;
}

int ReadToEnd(int fd, size_t expected, size_t limit, std::string* out) {
  out->resize(std::min(limit, expected + 1));
  size_t have = 0;
  while (have < limit) {
    if (have == out->size()) out->resize(std::min(limit, std::max<size_t>(have * 2, 65536)));
    const ssize_t got = ::read(fd, out->data() + have, out->size() - have);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      out->clear();
      return error;
    }
    if (got == 0) break;
    have += static_cast<size_t>(got);
  }
  out->resize(have);
  return 0;
}

FileReader::Status RealFileReader::ReadFile(const std::string& path, size_t max_bytes,
                                            std::string* contents, Failure* failure) {
  contents->clear();
  // One stat, checked before opening: opening a FIFO for reading blocks
  // until a writer appears, and a device may never reach end of file.
  struct stat before {};
  if (::stat(path.c_str(), &before) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::kNotFound;
    *failure = {"cannot read", std::generic_category().message(errno)};
    return Status::kError;
  }
  if (S_ISDIR(before.st_mode)) return Status::kIsDirectory;
  if (!S_ISREG(before.st_mode)) {
    failure->reason = SpecialFileReason(before.st_mode);
    return Status::kNotRegular;
  }
  if (static_cast<uintmax_t>(before.st_size) > max_bytes) {
    failure->size = static_cast<uintmax_t>(before.st_size);
    return Status::kTooLarge;
  }
  // O_NONBLOCK: should the path have been replaced by a FIFO since the check,
  // opening it does not wait for a writer; fstat then refuses it. On a
  // regular file O_NONBLOCK changes nothing, so it stays set for the reads.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    *failure = {"cannot open", std::generic_category().message(errno)};
    return Status::kError;
  }
  struct stat sb {};
  if (::fstat(fd.get(), &sb) != 0) {
    *failure = {"cannot read", std::generic_category().message(errno)};
    return Status::kError;
  }
  if (!S_ISREG(sb.st_mode)) {
    failure->reason = SpecialFileReason(sb.st_mode);
    return Status::kNotRegular;
  }
  // At most max_bytes + 1: the file may grow while it is read.
  const size_t expected = static_cast<size_t>(std::max<off_t>(sb.st_size, 0));
  if (const int error = ReadToEnd(fd.get(), expected, max_bytes + 1, contents); error != 0) {
    *failure = {"error while reading", std::generic_category().message(error)};
    return Status::kError;
  }
  if (contents->size() > max_bytes) {
    contents->clear();
    return Status::kTooLarge;
  }
  return Status::kOkay;
}

FileReader::Status MemoryFileReader::ReadFile(const std::string& path, size_t max_bytes,
                                              std::string* contents, Failure* failure) {
  ++reads_;
  contents->clear();
  auto it = files_.find(path);
  if (it == files_.end()) {
    // A path that is a prefix of stored files' paths is a directory.
    auto below = files_.lower_bound(path + "/");
    if (below != files_.end() && below->first.rfind(path + "/", 0) == 0) return Status::kIsDirectory;
    return Status::kNotFound;
  }
  if (it->second.size() > max_bytes) {
    failure->size = it->second.size();
    return Status::kTooLarge;
  }
  *contents = it->second;
  return Status::kOkay;
}

FileReader& RealFiles() {
  static RealFileReader reader;
  return reader;
}

}  // namespace nemoc
