// Loads a YAML spec into JSON, with a source map and located diagnostics.
//
// The loader is the first line of defence against hostile or accidental input:
// it validates the encoding, bounds size, node count and nesting depth, rejects
// YAML aliases (so alias "bombs" are never expanded), reports duplicate and
// non-string keys, and types scalars by the YAML 1.2 core schema. It never
// throws; every problem becomes a Diagnostic.
#ifndef NEMOC_SPEC_LOADER_H_
#define NEMOC_SPEC_LOADER_H_

#include <cstddef>
#include <set>
#include <string>

#include "diagnostic.h"
#include "source_map.h"

namespace nemoc {

class FileReader;  // file_reader.h

struct LoadOptions {
  /// Larger inputs are rejected before parsing ("input.too-large").
  size_t max_bytes = 1 << 20;  // 1 MiB
  /// Scalars + mappings + sequences (+ aliases) in the document ("yaml.too-large").
  size_t max_nodes = 100000;
  /// Maximum nesting of mappings/sequences; the top-level mapping is depth 1
  /// ("yaml.too-deep").
  int max_depth = 64;
};

/// Parses `text` (the contents of `file`) into doc->root + doc->map. Returns
/// false and appends located diagnostics on failure (return value == "an error
/// was appended by this call"). Sets doc->file and doc->text in all cases, so
/// errors can quote the line (a leading UTF-8 byte order mark is removed from
/// doc->text; columns are byte columns counted without it).
///
/// Plain scalars spelled as YAML 1.1 booleans (yes/no/on/off/y/n, any of their
/// usual capitalisations) load as strings; when `yaml11_bool_pointers` is given,
/// the JSON pointer of each such value is inserted into it, so a later stage
/// can attach Yaml11BoolHint().
bool LoadSpecText(const std::string& file, std::string text, Document* doc,
                  Diagnostics* diags, const LoadOptions& options = {},
                  std::set<std::string>* yaml11_bool_pointers = nullptr);

/// Reads the file through `reader` (nullptr: the real file system; see
/// file_reader.h) and calls LoadSpecText. A missing, unreadable or oversized
/// file, a directory, or anything else that is not a regular file - a named
/// pipe, a socket, a device - is reported as an error located at the file;
/// special files are refused without being opened.
bool LoadSpecFile(const std::string& path, Document* doc, Diagnostics* diags,
                  const LoadOptions& options = {},
                  std::set<std::string>* yaml11_bool_pointers = nullptr,
                  FileReader* reader = nullptr);

/// True for the YAML 1.1 boolean spellings that YAML 1.2 reads as strings:
/// y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF.
bool IsYaml11Bool(const std::string& text);

/// Advice for a value such as `enabled: yes`:
/// "yes" is a YAML 1.1 boolean; nemoc reads it as the string "yes". Write
/// true/false for a boolean, or quote it ("yes") to keep the string.
std::string Yaml11BoolHint(const std::string& text);

}  // namespace nemoc

#endif  // NEMOC_SPEC_LOADER_H_
