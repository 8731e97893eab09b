// What the NeMo framework runs on, by NeMo Framework container release: the
// facts C++ checks read from libsonnet/nemo/versions.json (its "nemo1"
// object, each value citing its source there), so that a release is table
// rows, not code (docs/nemo-versions.md). Releases are YY*100+MM (2507 for
// 25.07), as framework_check.h NemoRelease reads them from an image.
#ifndef NEMOC_NEMO_RELEASES_H_
#define NEMOC_NEMO_RELEASES_H_

#include <string>

namespace nemoc {

class FileReader;  // file_reader.h

struct NemoReleases {
  /// A framework nemo1 stage on a later release is refused.
  int last_nemo1 = 0;
  /// The first release whose NeMo 1 reads model.scale_positional_embedding
  /// (Llama 3.1 RoPE scaling).
  int nemo1_scale_positional_embedding_since = 0;

  /// Reads versions.json through `reader` (nullptr = the file system); false
  /// with `err` naming the file and the member at fault.
  static bool Load(const std::string& path, NemoReleases* out, std::string* err, FileReader* reader = nullptr);
};

/// "25.07" -> 2507; 0 when it is not YY.MM.
int ReleaseNumber(const std::string& yy_mm);

}  // namespace nemoc

#endif  // NEMOC_NEMO_RELEASES_H_
