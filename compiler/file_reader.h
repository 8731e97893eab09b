// The one seam through which the compiler reads its inputs, in the style of
// ninja's FileReader: spec files, the data directory's tables (the input
// schema, models.json, accelerators.json), the editors' schema copy a
// modeline names, and the Jsonnet libraries' contents. Production passes a
// RealFileReader; tests pass a MemoryFileReader, or wrap one to prove that a
// stage reads nothing (compiler_test.cc: Prepare and Finish read no file).
// The output tree is written through disk_interface.h's Disk.
#ifndef NEMOC_FILE_READER_H_
#define NEMOC_FILE_READER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace nemoc {

/// The data directory's tables and the input schema are far below this.
inline constexpr size_t kMaxTableBytes = 64u << 20;

class FileReader {
 public:
  enum class Status {
    kOkay,
    kNotFound,
    kIsDirectory,
    kNotRegular,  // a named pipe, socket or device: refused before it is opened
    kTooLarge,    // larger than max_bytes
    kError,       // anything else (permissions, I/O)
  };
  /// Why a read failed, in words the caller puts after the file's name.
  struct Failure {
    std::string action;  // "cannot read", "cannot open", "error while reading"
    std::string reason;  // the system's message, or "is a named pipe (FIFO)" for kNotRegular
    uintmax_t size = 0;  // kTooLarge: the size, when it was known before reading (0 = not known)
  };

  virtual ~FileReader() = default;
  /// Reads the whole regular file `path`, at most `max_bytes`.
  virtual Status ReadFile(const std::string& path, size_t max_bytes, std::string* contents,
                          Failure* failure) = 0;
  /// The same, with a one-line error message on failure.
  bool Read(const std::string& path, size_t max_bytes, std::string* contents, std::string* err);
};

/// The real file system. Special files are refused without being opened
/// (opening a FIFO blocks until a writer appears; a device may never end);
/// a file that grows past max_bytes while it is read is refused too.
class RealFileReader : public FileReader {
 public:
  Status ReadFile(const std::string& path, size_t max_bytes, std::string* contents,
                  Failure* failure) override;
};

/// Files held in memory (tests, the fuzz targets). Paths are compared as
/// given; a path below a stored file's path counts as not found.
class MemoryFileReader : public FileReader {
 public:
  void Add(const std::string& path, std::string contents) { files_[path] = std::move(contents); }
  Status ReadFile(const std::string& path, size_t max_bytes, std::string* contents,
                  Failure* failure) override;
  /// How many reads were asked for (found or not).
  size_t reads() const { return reads_; }

 private:
  std::map<std::string, std::string> files_;
  size_t reads_ = 0;
};

/// The process's real reader (stateless, shared).
FileReader& RealFiles();

/// Reads `fd` to its end (or `limit` bytes) straight into `out`, sized
/// first from `expected` (the file's size, when known) so a regular file
/// costs one copy from the kernel. Returns 0, or the errno of a failed read
/// (then `out` is empty). RealFileReader and RealDisk read through it.
int ReadToEnd(int fd, size_t expected, size_t limit, std::string* out);

}  // namespace nemoc

#endif  // NEMOC_FILE_READER_H_
