#include "spec_loader.h"
#include "test_inputs.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace nemoc {
namespace {

using nlohmann::json;

struct Loaded {
  bool ok = false;
  Document doc;
  Diagnostics diags;
  std::set<std::string> yaml11;
};

Loaded Load(const std::string& text, const LoadOptions& options = {}) {
  Loaded l;
  l.ok = LoadSpecText("spec.yaml", text, &l.doc, &l.diags, options, &l.yaml11);
  return l;
}

// "code@line:col" for every diagnostic, in order.
std::vector<std::string> Found(const Diagnostics& ds) {
  std::vector<std::string> out;
  for (const Diagnostic& d : ds.items()) {
    out.push_back(d.code + "@" + std::to_string(d.location.line) + ":" +
                  std::to_string(d.location.column));
  }
  return out;
}

using Codes = std::vector<std::string>;

// ---------------------------------------------------------------------------
// Scalar typing (YAML 1.2 core schema).

struct TypingCase {
  const char* yaml;
  json expected;
  json::value_t type;
  bool yaml11_bool;
};

TEST(SpecLoaderTyping, CoreSchemaTable) {
  const TypingCase cases[] = {
      {"a: 3", 3, json::value_t::number_integer, false},
      {"a: \"3\"", "3", json::value_t::string, false},
      {"a: '3'", "3", json::value_t::string, false},
      {"a: 3.5", 3.5, json::value_t::number_float, false},
      {"a: 1e3", 1000.0, json::value_t::number_float, false},
      {"a: -1.5E-2", -0.015, json::value_t::number_float, false},
      {"a: .5", 0.5, json::value_t::number_float, false},
      {"a: 5.", 5.0, json::value_t::number_float, false},
      {"a: 0x1F", 31, json::value_t::number_integer, false},
      {"a: 0o17", 15, json::value_t::number_integer, false},
      {"a: 012", 12, json::value_t::number_integer, false},
      {"a: +7", 7, json::value_t::number_integer, false},
      {"a: -0", 0, json::value_t::number_integer, false},
      {"a: true", true, json::value_t::boolean, false},
      {"a: False", false, json::value_t::boolean, false},
      {"a: TRUE", true, json::value_t::boolean, false},
      {"a: tRUE", "tRUE", json::value_t::string, false},
      {"a: yes", "yes", json::value_t::string, true},
      {"a: No", "No", json::value_t::string, true},
      {"a: ON", "ON", json::value_t::string, true},
      {"a: y", "y", json::value_t::string, true},
      {"a: \"yes\"", "yes", json::value_t::string, false},
      {"a: 'off'", "off", json::value_t::string, false},
      {"a: ~", nullptr, json::value_t::null, false},
      {"a: null", nullptr, json::value_t::null, false},
      {"a: NULL", nullptr, json::value_t::null, false},
      {"a:", nullptr, json::value_t::null, false},
      {"a: \"null\"", "null", json::value_t::string, false},
      {"a: |\n  x\n", "x\n", json::value_t::string, false},
      {"a: >-\n  x\n  y\n", "x y", json::value_t::string, false},
      {"a: 0x", "0x", json::value_t::string, false},
      {"a: 0o8", "0o8", json::value_t::string, false},
      {"a: 1_000", "1_000", json::value_t::string, false},
      {"a: 1:30", "1:30", json::value_t::string, false},
      {"a: 2001-12-14", "2001-12-14", json::value_t::string, false},
      {"a: 1e", "1e", json::value_t::string, false},
      {"a: .", ".", json::value_t::string, false},
      {"a: inf", "inf", json::value_t::string, false},
      {"a: !!str 3", "3", json::value_t::string, false},
      {"a: !!str", "", json::value_t::string, false},
      {"a: !!float 3", 3.0, json::value_t::number_float, false},
      {"a: !!int \"7\"", 7, json::value_t::number_integer, false},
      {"a: !!bool \"true\"", true, json::value_t::boolean, false},
      {"a: !!null ''", nullptr, json::value_t::null, false},
      {"a: ! 3", "3", json::value_t::string, false},
  };
  for (const TypingCase& c : cases) {
    SCOPED_TRACE(c.yaml);
    Loaded l = Load(c.yaml);
    ASSERT_TRUE(l.ok) << RenderText(l.diags, {});
    ASSERT_TRUE(l.doc.root.contains("a"));
    const json& v = l.doc.root["a"];
    EXPECT_EQ(v.type(), c.type);
    EXPECT_EQ(v, c.expected);
    EXPECT_EQ(l.yaml11.count("/a"), c.yaml11_bool ? 1u : 0u);
  }
}

TEST(SpecLoaderTyping, IntegersStoredAsInt64WhenTheyFit) {
  Loaded l = Load(
      "min: -9223372036854775808\n"
      "max: 9223372036854775807\n"
      "umax: 18446744073709551615\n"
      "huge: 99999999999999999999999\n"
      "neghuge: -99999999999999999999999\n"
      "hexbig: 0xFFFFFFFFFFFFFFFF\n"
      "hexhuge: 0x10000000000000000\n"
      "tiny: 1e-400\n");
  ASSERT_TRUE(l.ok) << RenderText(l.diags, {});
  const json& r = l.doc.root;
  EXPECT_EQ(r["min"].type(), json::value_t::number_integer);
  EXPECT_EQ(r["min"].get<int64_t>(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(r["max"].type(), json::value_t::number_integer);
  EXPECT_EQ(r["max"].get<int64_t>(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(r["umax"].type(), json::value_t::number_unsigned);
  EXPECT_EQ(r["umax"].get<uint64_t>(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(r["huge"].type(), json::value_t::number_float);
  EXPECT_DOUBLE_EQ(r["huge"].get<double>(), 1e23);
  EXPECT_DOUBLE_EQ(r["neghuge"].get<double>(), -1e23);
  EXPECT_EQ(r["hexbig"].type(), json::value_t::number_unsigned);
  EXPECT_EQ(r["hexhuge"].type(), json::value_t::number_float);
  EXPECT_DOUBLE_EQ(r["hexhuge"].get<double>(), 18446744073709551616.0);
  EXPECT_EQ(r["tiny"], 0.0);
}

TEST(SpecLoaderTyping, Yaml11BooleansInSequencesAndNestedMapsAreRecorded) {
  Loaded l = Load("a:\n  flags: [on, \"off\", yes]\n  b:\n    c/d: NO\nyes: 1\n");
  ASSERT_TRUE(l.ok) << RenderText(l.diags, {});
  EXPECT_EQ(l.yaml11, (std::set<std::string>{"/a/flags/0", "/a/flags/2", "/a/b/c~1d"}));
  // A YAML 1.1 boolean spelled as a key is just a string key.
  EXPECT_EQ(l.doc.root["yes"], 1);
  EXPECT_EQ(l.doc.root["a"]["b"]["c/d"], "NO");
}

TEST(SpecLoaderTyping, Yaml11OutParamIsOptional) {
  Document doc;
  Diagnostics diags;
  EXPECT_TRUE(LoadSpecText("spec.yaml", "a: yes\n", &doc, &diags));
  EXPECT_EQ(doc.root["a"], "yes");
}

TEST(SpecLoaderTyping, Yaml11BoolHelpers) {
  for (const char* w : {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
                        "on", "On", "ON", "off", "Off", "OFF"}) {
    EXPECT_TRUE(IsYaml11Bool(w)) << w;
  }
  for (const char* w : {"yES", "true", "", "oN", "nope"}) {
    EXPECT_FALSE(IsYaml11Bool(w)) << w;
  }
  EXPECT_EQ(Yaml11BoolHint("yes"),
            "\"yes\" is a YAML 1.1 boolean; nemoc reads it as the string \"yes\". "
            "Write true/false for a boolean, or quote it (\"yes\") to keep the "
            "string.");
}

TEST(SpecLoaderTyping, NonFiniteNumbersAreLocatedErrors) {
  Loaded l = Load("a: .inf\nb: -.Inf\nc: +.INF\nd: .nan\ne: 1e400\nf: \".inf\"\n");
  EXPECT_FALSE(l.ok);
  EXPECT_EQ(Found(l.diags), (Codes{"yaml.not-finite@1:4", "yaml.not-finite@2:4",
                                   "yaml.not-finite@3:4", "yaml.not-finite@4:4",
                                   "yaml.not-finite@5:4"}));
  EXPECT_NE(l.diags.items()[0].message.find("not a finite number"), std::string::npos);
  EXPECT_EQ(l.doc.root["f"], ".inf");
}

TEST(SpecLoaderTyping, HugeIntegerBeyondDoubleIsNotFinite) {
  Loaded l = Load("a: " + std::string(400, '9') + "\nb: 0x" + std::string(300, 'f') + "\n");
  EXPECT_EQ(Found(l.diags), (Codes{"yaml.not-finite@1:4", "yaml.not-finite@2:4"}));
}

TEST(SpecLoaderTyping, TagErrors) {
  Loaded l = Load(
      "a: !foo x\n"
      "b: !!int abc\n"
      "c: !!binary aGk=\n"
      "d: !!map [1]\n"
      "e: !custom {x: 1}\n"
      "f: !!bool yes\n");
  EXPECT_FALSE(l.ok);
  EXPECT_EQ(Found(l.diags),
            (Codes{"yaml.unknown-tag@1:4", "yaml.tag-mismatch@2:4", "yaml.unknown-tag@3:4",
                   "yaml.tag-mismatch@4:4", "yaml.unknown-tag@5:4",
                   "yaml.tag-mismatch@6:4"}));
  EXPECT_NE(l.diags.items()[0].message.find("!foo"), std::string::npos);
  EXPECT_NE(l.diags.items()[1].message.find("!!int"), std::string::npos);
}

// ---------------------------------------------------------------------------
// Source map.

constexpr const char* kPipeline =
    "apiVersion: nemo/v1\n"         // 1
    "kind: Pipeline\n"              // 2
    "spec:\n"                       // 3
    "  stages:\n"                   // 4
    "    train:\n"                  // 5
    "      nodes: 4\n"              // 6
    "      args: [--lr, \"0.1\"]\n"  // 7
    "    eval:\n"                   // 8
    "      - step: score\n"         // 9
    "        a/b~c: x\n";           // 10

TEST(SpecLoaderSourceMap, ValuesAndKeysAreLocated) {
  Loaded l = Load(kPipeline);
  ASSERT_TRUE(l.ok) << RenderText(l.diags, {});
  const SourceMap& m = l.doc.map;
  auto at = [](int line, int col) { return std::make_pair(line, col); };
  auto loc = [&](const std::string& p, bool key = false) {
    Location x = m.Locate(p, key);
    EXPECT_EQ(x.file, "spec.yaml");
    return std::make_pair(x.line, x.column);
  };
  EXPECT_EQ(loc("/spec/stages/train/nodes"), at(6, 14));
  EXPECT_EQ(loc("/spec/stages/train/nodes", true), at(6, 7));
  EXPECT_EQ(loc(""), at(1, 1));
  EXPECT_EQ(loc("/apiVersion"), at(1, 13));
  EXPECT_EQ(loc("/apiVersion", true), at(1, 1));
  EXPECT_EQ(loc("/spec"), at(4, 3));  // a block mapping starts at its first key
  EXPECT_EQ(loc("/spec", true), at(3, 1));
  EXPECT_EQ(loc("/spec/stages/train/args"), at(7, 13));
  EXPECT_EQ(loc("/spec/stages/train/args/0"), at(7, 14));
  EXPECT_EQ(loc("/spec/stages/train/args/1"), at(7, 20));
  EXPECT_EQ(loc("/spec/stages/eval"), at(9, 7));
  EXPECT_EQ(loc("/spec/stages/eval/0"), at(9, 9));
  EXPECT_EQ(loc("/spec/stages/eval/0/step"), at(9, 15));
  EXPECT_EQ(loc("/spec/stages/eval/0/step", true), at(9, 9));
  EXPECT_EQ(loc("/spec/stages/eval/0/a~1b~0c"), at(10, 16));
  EXPECT_EQ(loc("/spec/stages/eval/0/a~1b~0c", true), at(10, 9));
  EXPECT_TRUE(m.Has("/spec/stages/eval/0/a~1b~0c"));
  EXPECT_FALSE(m.Has("/spec/stages/eval/0/a/b~c"));
  // A missing field falls back to its parent mapping.
  EXPECT_EQ(loc("/spec/stages/train/replicas"), at(6, 7));
  EXPECT_EQ(l.doc.root["spec"]["stages"]["train"]["args"], json({"--lr", "0.1"}));
  EXPECT_EQ(l.doc.file, "spec.yaml");
  EXPECT_EQ(l.doc.text, kPipeline);
}

TEST(SpecLoaderSourceMap, CrLfLineEndings) {
  Loaded l = Load("a: 1\r\nb:\r\n  c: x\r\n");
  ASSERT_TRUE(l.ok) << RenderText(l.diags, {});
  Location x = l.doc.map.Locate("/b/c");
  EXPECT_EQ(x.line, 3);
  EXPECT_EQ(x.column, 6);
}

TEST(SpecLoaderSourceMap, Utf8BomIsSkippedAndColumnsAreBytes) {
  Loaded l = Load("\xEF\xBB\xBF" "name: caf\xC3\xA9\n\xC3\xA9t\xC3\xA9: 2\n");
  ASSERT_TRUE(l.ok) << RenderText(l.diags, {});
  EXPECT_EQ(l.doc.root["name"], "caf\xC3\xA9");
  EXPECT_EQ(l.doc.text.substr(0, 4), "name");
  Location x = l.doc.map.Locate("/name");
  EXPECT_EQ(x.line, 1);
  EXPECT_EQ(x.column, 7);
  x = l.doc.map.Locate("/\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(x.line, 2);
  EXPECT_EQ(x.column, 8);  // byte column: "été" is 5 bytes
}

// ---------------------------------------------------------------------------
// YAML-level errors.

TEST(SpecLoaderErrors, SyntaxErrorUsesMarkAndBareMessage) {
  Loaded l = Load("a: 1\nb:\n\tc: 2\n");
  EXPECT_FALSE(l.ok);
  ASSERT_EQ(Found(l.diags), (Codes{"yaml.syntax@3:3"}));
  const Diagnostic& d = l.diags.items()[0];
  EXPECT_EQ(d.message, "invalid YAML: illegal map value");
  EXPECT_NE(d.hint.find("tab"), std::string::npos);
  EXPECT_TRUE(l.doc.root.is_null());
  EXPECT_EQ(l.doc.text, "a: 1\nb:\n\tc: 2\n");  // kept for quoting
}

TEST(SpecLoaderErrors, UnclosedFlowSequencePointsAtTheBracket) {
  Loaded l = Load("a:\n  b: [1, 2\n");
  ASSERT_EQ(Found(l.diags), (Codes{"yaml.syntax@3:1"}));
  EXPECT_EQ(l.diags.items()[0].message, "invalid YAML: end of sequence flow not found");
  EXPECT_EQ(l.diags.items()[0].hint, "the '[' on line 2, column 6 is not closed");
}

TEST(SpecLoaderErrors, UnterminatedQuotedStringIsAnError) {
  // yaml-cpp itself accepts this and swallows the rest of the file.
  Loaded l = Load("a: 1\nb: \"abc\nc: 2\n");
  EXPECT_FALSE(l.ok);
  EXPECT_EQ(Found(l.diags), (Codes{"yaml.syntax@2:4"}));
  Loaded ok = Load("a: \"x \\\" y\"\nb: 'it''s'\nc: \"multi\n  line\"\n");
  EXPECT_TRUE(ok.ok) << RenderText(ok.diags, {});
  EXPECT_EQ(ok.doc.root["a"], "x \" y");
  EXPECT_EQ(ok.doc.root["b"], "it's");
  EXPECT_EQ(ok.doc.root["c"], "multi line");
}

TEST(SpecLoaderErrors, DuplicateKeysAreAllReported) {
  Loaded l = Load(
      "name: a\n"      // 1
      "replicas: 1\n"  // 2
      "name: b\n"      // 3
      "spec:\n"        // 4
      "  x: 1\n"       // 5
      "  x: 2\n"       // 6
      "  y: 3\n");     // 7
  EXPECT_FALSE(l.ok);
  ASSERT_EQ(Found(l.diags),
            (Codes{"yaml.duplicate-key@3:1", "yaml.duplicate-key@6:3"}));
  EXPECT_EQ(l.diags.items()[0].message,
            "duplicate key \"name\"; it is already defined on line 1");
  EXPECT_EQ(l.diags.items()[1].message,
            "duplicate key \"x\"; it is already defined on line 5");
  // The first definition wins, and the walk went on past the duplicates.
  EXPECT_EQ(l.doc.root["name"], "a");
  EXPECT_EQ(l.doc.root["spec"], json({{"x", 1}, {"y", 3}}));
  EXPECT_EQ(l.doc.map.Locate("/spec/x", true).line, 5);
}

TEST(SpecLoaderErrors, DuplicateKeysInFlowMappings) {
  Loaded l = Load("a: {k: 1, k: 2}\n");
  EXPECT_EQ(Found(l.diags), (Codes{"yaml.duplicate-key@1:11"}));
}

TEST(SpecLoaderErrors, MultipleDocuments) {
  Loaded l = Load("a: 1\nb: 2\n---\nc: 3\n");
  EXPECT_FALSE(l.ok);
  EXPECT_EQ(Found(l.diags), (Codes{"yaml.multiple-documents@3:1"}));
  EXPECT_EQ(l.doc.root, json({{"a", 1}, {"b", 2}}));
  // An explicit start marker before the only document is fine, and so is a
  // trailing empty document.
  EXPECT_TRUE(Load("---\na: 1\n").ok);
  EXPECT_TRUE(Load("a: 1\n---\n").ok);
  EXPECT_TRUE(Load("a: 1\n...\n").ok);
  EXPECT_EQ(Found(Load("---\na: 1\n---\n# x\n---\nb: 2\n").diags),
            (Codes{"yaml.multiple-documents@5:1"}));
}

TEST(SpecLoaderErrors, EmptyDocuments) {
  EXPECT_EQ(Found(Load("").diags), (Codes{"yaml.empty@0:0"}));
  EXPECT_EQ(Found(Load("# only a comment\n\n").diags), (Codes{"yaml.empty@0:0"}));
  EXPECT_EQ(Found(Load("~\n").diags), (Codes{"yaml.empty@1:1"}));
  EXPECT_EQ(Found(Load("\n\nnull\n").diags), (Codes{"yaml.empty@3:1"}));
  EXPECT_FALSE(Load("---\n").ok);
}

TEST(SpecLoaderErrors, TopLevelMustBeAMapping) {
  Loaded seq = Load("- a\n- b\n");
  EXPECT_EQ(Found(seq.diags), (Codes{"spec.not-a-mapping@1:1"}));
  EXPECT_NE(seq.diags.items()[0].message.find("sequence"), std::string::npos);
  Loaded scalar = Load("\n  hello\n");
  EXPECT_EQ(Found(scalar.diags), (Codes{"spec.not-a-mapping@2:3"}));
  EXPECT_NE(scalar.diags.items()[0].message.find("string"), std::string::npos);
}

TEST(SpecLoaderErrors, NonStringKeys) {
  Loaded l = Load(
      "1: x\n"      // 1
      "true: y\n"   // 2
      "? [a]\n"     // 3
      ": b\n"       // 4
      "null: z\n"   // 5
      "\"1\": ok\n"  // 6
      "2.5: w\n"    // 7
      "? {k: v}\n"  // 8
      ": c\n"       // 9
      "!!str 3: s\n");
  EXPECT_FALSE(l.ok);
  EXPECT_EQ(Found(l.diags),
            (Codes{"yaml.key-not-string@1:1", "yaml.key-not-string@2:1",
                   "yaml.key-not-string@3:3", "yaml.key-not-string@5:1",
                   "yaml.key-not-string@7:1", "yaml.key-not-string@8:3"}));
  EXPECT_EQ(l.diags.items()[0].message,
            "mapping key 1 is an integer, but keys must be strings");
  EXPECT_EQ(l.diags.items()[0].hint, "quote the key (\"1\") to use it as text");
  EXPECT_EQ(l.doc.root, json({{"1", "ok"}, {"3", "s"}}));
}

TEST(SpecLoaderErrors, NullKeys) {
  Loaded l = Load("~: 1\n: 2\n");
  ASSERT_EQ(Found(l.diags), (Codes{"yaml.key-not-string@1:1", "yaml.key-not-string@2:1"}));
  EXPECT_EQ(l.diags.items()[0].hint, "quote the key (\"~\") to use it as text");
  EXPECT_EQ(l.diags.items()[1].hint, "write a key name before the ':'");
}

TEST(SpecLoaderErrors, ComplexKeyAlone) {
  Loaded l = Load("? [a]\n: b\n");
  EXPECT_EQ(Found(l.diags), (Codes{"yaml.key-not-string@1:3"}));
}

TEST(SpecLoaderErrors, AliasesAreRejected) {
  Loaded l = Load("base: &b\n  x: 1\ncopy: *b\nlist:\n  - *b\n");
  EXPECT_FALSE(l.ok);
  EXPECT_EQ(Found(l.diags), (Codes{"yaml.alias@3:7", "yaml.alias@5:5"}));
  EXPECT_EQ(l.diags.items()[0].message,
            "YAML aliases are not supported in nemoc specs; write the value out");
  EXPECT_EQ(l.diags.items()[0].hint,
            "*b refers to the anchor &b on line 1; copy that value here instead");
}

TEST(SpecLoaderErrors, MergeKeyAliasIsRejected) {
  Loaded l = Load("base: &b {x: 1}\nd:\n  <<: *b\n");
  EXPECT_EQ(Found(l.diags), (Codes{"yaml.alias@3:7"}));
}

TEST(SpecLoaderErrors, AnchorWithoutAliasIsAllowed) {
  Loaded l = Load("a: &x 1\nb: &y [2]\n");
  EXPECT_TRUE(l.ok) << RenderText(l.diags, {});
  EXPECT_EQ(l.doc.root, json({{"a", 1}, {"b", {2}}}));
}

TEST(SpecLoaderErrors, UndefinedAliasIsASyntaxError) {
  EXPECT_EQ(Found(Load("a: *nope\n").diags), (Codes{"yaml.syntax@1:4"}));
}

// Refused without expanding the aliases: five located errors and a summary,
// never 9^9 nodes (how long it takes is spec_loader_perftest.cc's).
TEST(SpecLoaderErrors, BillionLaughsIsRefusedWithoutExpandingIt) {
  const std::string text = test_inputs::BillionLaughsYaml();
  Loaded l = Load(text);
  EXPECT_FALSE(l.ok);
  ASSERT_FALSE(l.diags.items().empty());
  EXPECT_EQ(Found(l.diags)[0], "yaml.alias@2:8");
  // 81 aliases: five are reported one by one, then a single summary note.
  EXPECT_EQ(l.diags.error_count(), 5u);
  EXPECT_EQ(l.diags.items().size(), 6u);
  EXPECT_EQ(l.diags.items()[5].severity, Severity::kNote);
  EXPECT_EQ(l.diags.items()[5].message, "... and 76 more YAML aliases");
}

TEST(SpecLoaderErrors, TooDeepFlow) {
  Loaded l = Load("a: " + std::string(200, '[') + std::string(200, ']') + "\n");
  EXPECT_FALSE(l.ok);
  // The top-level mapping is level 1, so the 64th '[' (column 67) is level 65.
  EXPECT_EQ(Found(l.diags), (Codes{"yaml.too-deep@1:67"}));
  EXPECT_TRUE(l.doc.root.is_null());
}

TEST(SpecLoaderErrors, TooDeepBlock) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += std::string(i, ' ') + "k:\n";
  Loaded l = Load(text);
  EXPECT_EQ(Found(l.diags), (Codes{"yaml.too-deep@65:65"}));
}

TEST(SpecLoaderErrors, DepthLimitBoundary) {
  LoadOptions o;
  o.max_depth = 3;
  EXPECT_TRUE(Load("a: {b: [1]}\n", o).ok);
  EXPECT_EQ(Found(Load("a: {b: [[1]]}\n", o).diags), (Codes{"yaml.too-deep@1:9"}));
}

TEST(SpecLoaderErrors, NestingBeyondYamlCppLimitDoesNotCrash) {
  LoadOptions o;
  o.max_depth = 1000000;
  o.max_nodes = 10000000;
  Loaded l = Load(std::string(50000, '[') + std::string(50000, ']'), o);
  EXPECT_FALSE(l.ok);
  ASSERT_EQ(l.diags.items().size(), 1u);
  EXPECT_EQ(l.diags.items()[0].code, "yaml.too-deep");
}

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

TEST(SpecLoaderErrors, UnclosedFlowSequencesAreOneSyntaxErrorWithinTheDepthLimit) {
  // yaml-cpp reports each '[' left open at the end of the file as the key of
  // a mapping that is not in the text, doubling the nesting: 40 '[' used to
  // give 32 "mapping key is a sequence" errors and a depth error.
  Loaded l = Load(std::string(40, '[') + "\n");
  EXPECT_FALSE(l.ok);
  ASSERT_EQ(Found(l.diags), (Codes{"yaml.syntax@2:1"}));
  EXPECT_EQ(l.diags.items()[0].message, "invalid YAML: end of sequence flow not found");
  EXPECT_EQ(l.diags.items()[0].hint,
            "the '[' on line 1, column 40 is not closed (nor are the 39 before it)");
  EXPECT_TRUE(l.doc.root.is_null());

  Loaded two = Load("a: [1, [2\n");
  ASSERT_EQ(Found(two.diags), (Codes{"yaml.syntax@2:1"}));
  EXPECT_EQ(two.diags.items()[0].hint,
            "the '[' on line 1, column 8 is not closed (nor is the one before it)");

  // Deeper than max_depth but with a syntax error: only the syntax error
  // counts (the events before it are not to be trusted).
  EXPECT_EQ(Found(Load(std::string(100, '[') + "\n").diags), (Codes{"yaml.syntax@2:1"}));
}

TEST(SpecLoaderErrors, UnclosedFlowMappingsBeyondTheParserLimitAreTooDeep) {
  // Deeper than yaml-cpp recurses: the depth error, at the 65th '{' (the
  // first '{' is level 1), and nothing about the key of the mapping that
  // yaml-cpp invents around it.
  Loaded l = Load(Repeat("{a: ", 10000) + "\n");
  EXPECT_FALSE(l.ok);
  ASSERT_EQ(Found(l.diags), (Codes{"yaml.too-deep@1:257"}));
  EXPECT_EQ(l.diags.items()[0].message,
            "the spec nests mappings and sequences more than 64 levels deep");
  // The same for sequences, and for a closed document of that depth.
  EXPECT_EQ(Found(Load(std::string(10000, '[') + "\n").diags),
            (Codes{"yaml.too-deep@1:65"}));
  EXPECT_EQ(Found(Load("a: " + std::string(10000, '[') + std::string(10000, ']') + "\n").diags),
            (Codes{"yaml.too-deep@1:67"}));
  // A collection used as a key where its mapping starts shares its level.
  LoadOptions o;
  o.max_depth = 2;
  EXPECT_EQ(Found(Load("[[a]]: b\n", o).diags), (Codes{"yaml.key-not-string@1:1"}));
  EXPECT_EQ(Found(Load("[[[a]]]: b\n", o).diags),
            (Codes{"yaml.key-not-string@1:1", "yaml.too-deep@1:3"}));
}

TEST(SpecLoaderErrors, LimitsDoNotHideALaterSyntaxError) {
  std::string dups;
  for (int i = 0; i < 200; ++i) dups += "a: 1\n";
  EXPECT_EQ(Found(Load(dups + "b: [1\n").diags), (Codes{"yaml.syntax@202:1"}));
  LoadOptions o;
  o.max_depth = 3;
  EXPECT_EQ(Found(Load("a: [[[[1]]]]\nb: {c: 1\n", o).diags), (Codes{"yaml.syntax@3:1"}));
  // Without a syntax error the limits still stop the walk.
  EXPECT_EQ(Found(Load("a: [[[[1]]]]\nb: {c: 1}\n", o).diags), (Codes{"yaml.too-deep@1:6"}));
}

TEST(SpecLoaderErrors, NodeLimitStopsYamlCppEvenAfterAnotherLimit) {
  // yaml-cpp 0.7 reports an empty document forever for a line starting with
  // ','; only the node limit stops it, so it stays a hard stop.
  EXPECT_EQ(Found(Load(",a: 1\n").diags), (Codes{"yaml.too-large@1:1"}));
  LoadOptions o;
  o.max_depth = 2;
  EXPECT_EQ(Found(Load("[[[1]]]\n,a: 1\n", o).diags), (Codes{"yaml.too-deep@1:3"}));
  o = {};
  o.max_nodes = 10;
  EXPECT_EQ(Found(Load("a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\nb: {c: 1\n", o).diags),
            (Codes{"yaml.too-large@1:26"}));
}

TEST(SpecLoaderErrors, FlowKeyOver1024CharactersNamesTheLimit) {
  const std::string key(1100, 'k');
  Loaded map = Load("x: 1\nlabels: {a: b, " + key + ": v}\n");
  EXPECT_FALSE(map.ok);
  ASSERT_EQ(Found(map.diags), (Codes{"yaml.syntax@2:16"}));
  EXPECT_EQ(map.diags.items()[0].message,
            "invalid YAML: this key is 1100 characters long, but a key written without '? ' "
            "may be at most 1024 characters long");
  EXPECT_EQ(map.diags.items()[0].hint, "shorten the key");
  // Quoted, and in a flow sequence (where yaml-cpp stops at the ':').
  EXPECT_EQ(Found(Load("a: {\"" + key + "\": v}\n").diags), (Codes{"yaml.syntax@1:5"}));
  Loaded seq = Load("a: [x, " + key + ": v]\n");
  ASSERT_EQ(Found(seq.diags), (Codes{"yaml.syntax@1:8"}));
  EXPECT_NE(seq.diags.items()[0].message.find("at most 1024 characters"), std::string::npos);
  // Non-ASCII: the limit is on bytes.
  Loaded utf8 = Load("a: {" + Repeat("\xC3\xA9", 600) + ": v}\n");
  ASSERT_EQ(Found(utf8.diags), (Codes{"yaml.syntax@1:5"}));
  EXPECT_NE(utf8.diags.items()[0].message.find("1200 bytes (in UTF-8) long"), std::string::npos);
  // 1024 characters up to the ':' is still a key.
  Loaded boundary = Load("a: {" + std::string(1024, 'k') + ": v}\n");
  EXPECT_TRUE(boundary.ok) << RenderText(boundary.diags, {});
  EXPECT_EQ(Found(Load("a: {" + std::string(1025, 'k') + ": v}\n").diags),
            (Codes{"yaml.syntax@1:5"}));
  // A flow mapping that is really not closed is still reported as such.
  Loaded open = Load("a: {b: 1\n");
  ASSERT_EQ(Found(open.diags), (Codes{"yaml.syntax@2:1"}));
  EXPECT_EQ(open.diags.items()[0].hint, "the '{' on line 1, column 4 is not closed");
}

TEST(SpecLoaderErrors, UnclosedQuoteInAFlowCollectionIsReportedAtTheQuote) {
  Loaded l = Load("a: 1\nb: {pool: \"gpu}\n");
  EXPECT_FALSE(l.ok);
  ASSERT_EQ(Found(l.diags), (Codes{"yaml.syntax@2:11"}));
  EXPECT_EQ(l.diags.items()[0].message,
            "invalid YAML: this quoted string is never closed (the closing \" is missing)");
  EXPECT_EQ(l.diags.items()[0].hint,
            "the string runs to the end of the file, so the '{' on line 2, column 4 is never "
            "closed; add the closing quote");
  Loaded seq = Load("a: [x, 'y, z]\nb: 2\n");
  ASSERT_EQ(Found(seq.diags), (Codes{"yaml.syntax@1:8"}));
  EXPECT_NE(seq.diags.items()[0].message.find("closing ' is missing"), std::string::npos);
  EXPECT_EQ(Found(Load("a: [{b: !!str \"x}]\n").diags), (Codes{"yaml.syntax@1:15"}));
}

TEST(SpecLoaderErrors, TooManyNodes) {
  LoadOptions o;
  o.max_nodes = 10;
  // Nodes: mapping, key, sequence, then the elements; "8" (column 26) is node 11.
  Loaded l = Load("a: [1, 2, 3, 4, 5, 6, 7, 8, 9]\n", o);
  EXPECT_EQ(Found(l.diags), (Codes{"yaml.too-large@1:26"}));
  EXPECT_TRUE(l.doc.root.is_null());
}

TEST(SpecLoaderErrors, ErrorFloodStops) {
  std::string text;
  for (int i = 0; i < 500; ++i) text += "a: 1\n";
  Loaded l = Load(text);
  EXPECT_EQ(l.diags.error_count(), 100u);
  EXPECT_EQ(l.diags.items().back().code, "yaml.too-many-errors");
  EXPECT_EQ(l.diags.items().back().severity, Severity::kNote);
}

// ---------------------------------------------------------------------------
// Input-level errors.

TEST(SpecLoaderInput, TooLarge) {
  Loaded l = Load(std::string(2 << 20, 'a'));
  EXPECT_FALSE(l.ok);
  ASSERT_EQ(Found(l.diags), (Codes{"input.too-large@0:0"}));
  EXPECT_EQ(l.diags.items()[0].location.file, "spec.yaml");
  EXPECT_NE(l.diags.items()[0].message.find("2097152"), std::string::npos);
  EXPECT_NE(l.diags.items()[0].message.find("1048576"), std::string::npos);
}

TEST(SpecLoaderInput, OneMebibyteLineLoads) {
  std::string big((1 << 20) - 16, 'x');
  Loaded l = Load("a: " + big + "\n");
  EXPECT_TRUE(l.ok) << RenderText(l.diags, {});
  EXPECT_EQ(l.doc.root["a"].get<std::string>().size(), big.size());
}

TEST(SpecLoaderInput, InvalidUtf8) {
  Loaded l = Load("a: 1\nb: caf\xE9 au lait\n");
  EXPECT_FALSE(l.ok);
  ASSERT_EQ(Found(l.diags), (Codes{"input.encoding@2:7"}));
  EXPECT_NE(l.diags.items()[0].message.find("0xE9"), std::string::npos);
  EXPECT_EQ(Found(Load("a: \xC0\xAF\n").diags), (Codes{"input.encoding@1:4"}));  // overlong
  EXPECT_EQ(Found(Load("a: \xED\xA0\x80\n").diags), (Codes{"input.encoding@1:4"}));  // surrogate
  EXPECT_EQ(Found(Load("a: \xF4\x90\x80\x80\n").diags), (Codes{"input.encoding@1:4"}));
  EXPECT_EQ(Found(Load("a: 1\nb: \xE2\x82").diags), (Codes{"input.encoding@2:4"}));  // truncated
  EXPECT_TRUE(Load("a: \xE2\x82\xAC \xF0\x9F\x98\x80\n").ok);
}

// yaml-cpp 0.7.0 decodes "\N" and "\_" to the bytes 0x85 and 0xA0; the loader
// hands on UTF-8 (U+0085, U+00A0), keys too, so the spec serializes as JSON
// (fuzz_loader's crash of 2026-11-29).
TEST(SpecLoaderInput, NextLineAndNoBreakSpaceEscapesAreUtf8) {
  Loaded l = Load("\"k\\N\": \"a\\Nb\\_c\\x85\\u00e9\"\n");
  ASSERT_TRUE(l.ok) << RenderText(l.diags, {});
  const std::string key = "k\xC2\x85";
  ASSERT_TRUE(l.doc.root.contains(key)) << l.doc.root.dump(-1, ' ', false,
                                                             nlohmann::json::error_handler_t::replace);
  EXPECT_EQ(l.doc.root[key].get<std::string>(), "a\xC2\x85" "b\xC2\xA0" "c\xC2\x85\xC3\xA9");
  EXPECT_NO_THROW((void)l.doc.root.dump());
}

TEST(SpecLoaderInput, NulByte) {
  Loaded l = Load(std::string("a: 1\nb: x\0y\n", 12));
  EXPECT_FALSE(l.ok);
  EXPECT_EQ(Found(l.diags), (Codes{"input.encoding@2:5"}));
  EXPECT_NE(l.diags.items()[0].message.find("NUL"), std::string::npos);
}

TEST(SpecLoaderInput, ControlCharacter) {
  EXPECT_EQ(Found(Load("a: \x1b[1m\n").diags), (Codes{"input.encoding@1:4"}));
  EXPECT_TRUE(Load("a: \"tab\there\"\r\n").ok);
}

TEST(SpecLoaderInput, Utf16And32ByteOrderMarks) {
  EXPECT_EQ(Found(Load(std::string("\xFF\xFE" "a\0:\0 \0" "1\0", 10)).diags),
            (Codes{"input.encoding@1:1"}));
  EXPECT_EQ(Found(Load(std::string("\xFE\xFF\0a", 4)).diags), (Codes{"input.encoding@1:1"}));
  Loaded l = Load(std::string("\0\0\xFE\xFF", 4));
  EXPECT_EQ(Found(l.diags), (Codes{"input.encoding@1:1"}));
  EXPECT_NE(l.diags.items()[0].message.find("UTF-32"), std::string::npos);
}

TEST(SpecLoaderInput, ReturnValueReflectsOnlyThisCall) {
  Document doc;
  Diagnostics diags;
  diags.Error("other.stage", "an earlier error");
  EXPECT_TRUE(LoadSpecText("spec.yaml", "a: 1\n", &doc, &diags));
  EXPECT_EQ(diags.items().size(), 1u);
  Diagnostics warnings_only;
  EXPECT_TRUE(LoadSpecText("spec.yaml", "a: yes\n", &doc, &warnings_only));
  EXPECT_TRUE(warnings_only.empty());
}

TEST(SpecLoaderInput, HostileInputsNeverThrow) {
  // Every prefix of a realistic spec, and random byte edits of it.
  std::string base = std::string(kPipeline) +
                     "  extra: {a: [1, 2, {b: \"c\"}], 'd': |\n    text\n  }\n"
                     "  anchors: &x [*x]\n  ? complex\n  : value\n";
  for (size_t n = 0; n <= base.size(); ++n) {
    Document doc;
    Diagnostics diags;
    EXPECT_NO_THROW(LoadSpecText("spec.yaml", base.substr(0, n), &doc, &diags));
  }
  std::mt19937 rng(42);
  const std::string alphabet = "[]{}:,-?&*!|>'\"#%@` \t\n\r\\~0.x\xC3\xA9\xFF";
  for (int iter = 0; iter < 2000; ++iter) {
    std::string text = base;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % text.size();
      char c = alphabet[rng() % alphabet.size()];
      if (rng() % 2) {
        text[at] = c;
      } else {
        text.insert(at, 1, c);
      }
    }
    Document doc;
    Diagnostics diags;
    bool ok = true;
    EXPECT_NO_THROW(ok = LoadSpecText("spec.yaml", text, &doc, &diags)) << text;
    EXPECT_EQ(ok, !diags.has_errors());
  }
}

// ---------------------------------------------------------------------------
// Files.

class SpecLoaderFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("spec_loader_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Write(const std::string& name, const std::string& content) {
    std::filesystem::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  std::filesystem::path dir_;
};

TEST_F(SpecLoaderFile, LoadsAFile) {
  std::string path = Write("ok.yaml", "a: 1\nb:\n  - yes\n");
  Document doc;
  Diagnostics diags;
  std::set<std::string> y11;
  EXPECT_TRUE(LoadSpecFile(path, &doc, &diags, {}, &y11));
  EXPECT_TRUE(diags.empty());
  EXPECT_EQ(doc.file, path);
  EXPECT_EQ(doc.text, "a: 1\nb:\n  - yes\n");
  EXPECT_EQ(doc.root, json({{"a", 1}, {"b", {"yes"}}}));
  Location x = doc.map.Locate("/b/0");
  EXPECT_EQ(x.file, path);
  EXPECT_EQ(x.line, 3);
  EXPECT_EQ(x.column, 5);
  EXPECT_EQ(y11, std::set<std::string>{"/b/0"});
}

TEST_F(SpecLoaderFile, ErrorsInAFileNameTheFile) {
  std::string path = Write("dup.yaml", "a: 1\na: 2\n");
  Document doc;
  Diagnostics diags;
  EXPECT_FALSE(LoadSpecFile(path, &doc, &diags));
  ASSERT_EQ(Found(diags), (Codes{"yaml.duplicate-key@2:1"}));
  EXPECT_EQ(diags.items()[0].location.file, path);
  EXPECT_EQ(doc.text, "a: 1\na: 2\n");
}

TEST_F(SpecLoaderFile, MissingFile) {
  std::string path = (dir_ / "nope.yaml").string();
  Document doc;
  Diagnostics diags;
  EXPECT_FALSE(LoadSpecFile(path, &doc, &diags));
  ASSERT_EQ(Found(diags), (Codes{"input.not-found@0:0"}));
  EXPECT_EQ(diags.items()[0].location.file, path);
  EXPECT_NE(diags.items()[0].message.find("nope.yaml"), std::string::npos);
  EXPECT_EQ(doc.file, path);
}

TEST_F(SpecLoaderFile, Directory) {
  Document doc;
  Diagnostics diags;
  EXPECT_FALSE(LoadSpecFile(dir_.string(), &doc, &diags));
  ASSERT_EQ(Found(diags), (Codes{"input.is-directory@0:0"}));
  EXPECT_EQ(diags.items()[0].location.file, dir_.string());
}

TEST_F(SpecLoaderFile, OversizedFile) {
  std::string path = Write("big.yaml", "a: " + std::string(4096, 'x') + "\n");
  LoadOptions o;
  o.max_bytes = 1024;
  Document doc;
  Diagnostics diags;
  EXPECT_FALSE(LoadSpecFile(path, &doc, &diags, o));
  ASSERT_EQ(Found(diags), (Codes{"input.too-large@0:0"}));
  EXPECT_NE(diags.items()[0].message.find("4100"), std::string::npos);
  EXPECT_NE(diags.items()[0].message.find("1024"), std::string::npos);
}

TEST_F(SpecLoaderFile, FifoIsRefusedWithoutOpeningIt) {
  const std::string path = (dir_ / "spec.yaml").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  Document doc;
  Diagnostics diags;
  auto load = std::async(std::launch::async, [&] { return LoadSpecFile(path, &doc, &diags); });
  if (load.wait_for(std::chrono::seconds(10)) == std::future_status::timeout) {
    ADD_FAILURE() << "LoadSpecFile blocked on a FIFO";
    int w = ::open(path.c_str(), O_WRONLY);  // lets the blocked open() return
    if (w >= 0) ::close(w);
  }
  EXPECT_FALSE(load.get());
  ASSERT_EQ(Found(diags), (Codes{"input.not-a-file@0:0"}));
  EXPECT_EQ(diags.items()[0].location.file, path);
  EXPECT_NE(diags.items()[0].message.find("\" is a named pipe (FIFO), not a regular file"),
            std::string::npos)
      << diags.items()[0].message;
  EXPECT_NE(diags.items()[0].hint.find("regular file"), std::string::npos);
  EXPECT_EQ(doc.file, path);
  EXPECT_TRUE(doc.root.is_null());
}

TEST_F(SpecLoaderFile, DevicesAreRefused) {
  for (const char* device : {"/dev/zero", "/dev/null"}) {
    if (!std::filesystem::exists(device)) continue;
    Document doc;
    Diagnostics diags;
    EXPECT_FALSE(LoadSpecFile(device, &doc, &diags));
    ASSERT_EQ(Found(diags), (Codes{"input.not-a-file@0:0"})) << device;
    EXPECT_NE(diags.items()[0].message.find("is a character device, not a regular file"),
              std::string::npos);
  }
}

TEST_F(SpecLoaderFile, SymlinkToARegularFileLoads) {
  std::string target = Write("real.yaml", "a: 1\n");
  std::filesystem::path link = dir_ / "link.yaml";
  std::filesystem::create_symlink(target, link);
  Document doc;
  Diagnostics diags;
  EXPECT_TRUE(LoadSpecFile(link.string(), &doc, &diags)) << RenderText(diags, {});
  EXPECT_EQ(doc.root, json({{"a", 1}}));
}

TEST_F(SpecLoaderFile, EmptyFile) {
  std::string path = Write("empty.yaml", "");
  Document doc;
  Diagnostics diags;
  EXPECT_FALSE(LoadSpecFile(path, &doc, &diags));
  EXPECT_EQ(Found(diags), (Codes{"yaml.empty@0:0"}));
}

}  // namespace
}  // namespace nemoc
