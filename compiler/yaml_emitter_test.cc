#include "yaml_emitter.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <regex.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace nemoc {
namespace {

using Json = nlohmann::json;

// JSON text of `value`, for failure messages (never throws on bad UTF-8).
std::string Show(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// ---------------------------------------------------------------------------
// Exact output.

TEST(EmitYamlTest, KubernetesObjectGolden) {
  const Json job = Json::parse(R"json({
    "status": null,
    "spec": {
      "weight": 0.1,
      "scale": 2016.0,
      "replicas": 2,
      "template": {
        "metadata": {"name": "worker",
                     "labels": {"b": "1", "a": "y", "B": "x"}},
        "spec": {
          "volumes": [{"emptyDir": {"medium": "Memory"}, "name": "dshm"}],
          "tolerations": [],
          "nodeSelector": {},
          "containers": [{
            "volumeMounts": [{"mountPath": "/dev/shm", "name": "dshm"}],
            "resources": {"limits": {"nvidia.com/gpu": 8, "memory": "512Gi"}},
            "image": "nvcr.io/nvidia/nemo:25.02",
            "env": [{"value": "1", "name": "NCCL_DEBUG"},
                    {"value": "on", "name": "ENABLE"}],
            "command": ["torchrun"],
            "args": ["--nnodes=2", "trainer.max_steps=100", "yes", "0123"],
            "name": "trainer"
          }]
        }
      }
    },
    "metadata": {"uid": "abc", "generateName": "pre-",
                 "annotations": {"k8s.v1.cni.cncf.io/networks": "ib0"},
                 "labels": {"team": "llm"}, "namespace": "ml",
                 "name": "pretrain"},
    "kind": "PyTorchJob",
    "apiVersion": "kubeflow.org/v1"
  })json");
  EXPECT_EQ(EmitYaml(job),
            "apiVersion: kubeflow.org/v1\n"
            "kind: PyTorchJob\n"
            "metadata:\n"
            "  name: pretrain\n"
            "  namespace: ml\n"
            "  labels:\n"
            "    team: llm\n"
            "  annotations:\n"
            "    k8s.v1.cni.cncf.io/networks: ib0\n"
            "  generateName: pre-\n"
            "  uid: abc\n"
            "spec:\n"
            "  replicas: 2\n"
            "  scale: 2016\n"
            "  template:\n"
            "    metadata:\n"
            "      labels:\n"
            "        B: x\n"
            "        a: \"y\"\n"
            "        b: \"1\"\n"
            "      name: worker\n"
            "    spec:\n"
            "      containers:\n"
            "      - name: trainer\n"
            "        args:\n"
            "        - --nnodes=2\n"
            "        - trainer.max_steps=100\n"
            "        - \"yes\"\n"
            "        - \"0123\"\n"
            "        command:\n"
            "        - torchrun\n"
            "        env:\n"
            "        - name: NCCL_DEBUG\n"
            "          value: \"1\"\n"
            "        - name: ENABLE\n"
            "          value: \"on\"\n"
            "        image: nvcr.io/nvidia/nemo:25.02\n"
            "        resources:\n"
            "          limits:\n"
            "            memory: 512Gi\n"
            "            nvidia.com/gpu: 8\n"
            "        volumeMounts:\n"
            "        - name: dshm\n"
            "          mountPath: /dev/shm\n"
            "      nodeSelector: {}\n"
            "      tolerations: []\n"
            "      volumes:\n"
            "      - name: dshm\n"
            "        emptyDir:\n"
            "          medium: Memory\n"
            "  weight: 0.1\n"
            "status: null\n");
}

TEST(EmitYamlTest, LiteralBlocksGolden) {
  const Json config_map = {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", "scripts"}}},
      {"data",
       {{"clip.sh", "#!/bin/bash\nset -e\n"},
        {"strip.txt", "a\nb"},
        {"keep.txt", "a\n\n"},
        {"indented.py", "  x = 1\ny = 2\n"},
        {"tabs.mk", "all:\n\techo hi\n"},
        {"windows.txt", "a\r\nb\r\n"},
        // Last in the document: `|+` would end it in two newlines.
        {"zz", "last\n\n"}}}};
  EXPECT_EQ(EmitYaml(config_map),
            "apiVersion: v1\n"
            "kind: ConfigMap\n"
            "metadata:\n"
            "  name: scripts\n"
            "data:\n"
            "  clip.sh: |\n"
            "    #!/bin/bash\n"
            "    set -e\n"
            "  indented.py: |2\n"
            "      x = 1\n"
            "    y = 2\n"
            "  keep.txt: |+\n"
            "    a\n"
            "\n"
            "  strip.txt: |-\n"
            "    a\n"
            "    b\n"
            "  tabs.mk: |\n"
            "    all:\n"
            "    \techo hi\n"
            "  windows.txt: \"a\\r\\nb\\r\\n\"\n"
            "  zz: \"last\\n\\n\"\n");
}

TEST(EmitYamlTest, LiteralBlocksInSequencesAndCompactMappings) {
  const Json value = {{"args", {"one\ntwo", " lead\n", "x\n\n\n"}},
                      {"items", {{{"script", "a\n\nb\n"}, {"name", "job"}}}},
                      {"z", 1}};
  EXPECT_EQ(EmitYaml(value),
            "args:\n"
            "- |-\n"
            "  one\n"
            "  two\n"
            "- |2\n"
            "   lead\n"
            "- |+\n"
            "  x\n"
            "\n"
            "\n"
            "items:\n"
            "- name: job\n"
            "  script: |\n"
            "    a\n"
            "\n"
            "    b\n"
            "z: 1\n");
}

TEST(EmitYamlTest, NestedSequencesAndEmptyCollections) {
  const Json value = {{"m", {{"e", Json::object()}, {"l", Json::array()}}},
                      {"s",
                       {Json::array({1, Json::array({2, 3})}), Json::object(),
                        Json::array(), nullptr, true, false}}};
  EXPECT_EQ(EmitYaml(value),
            "m:\n"
            "  e: {}\n"
            "  l: []\n"
            "s:\n"
            "- - 1\n"
            "  - - 2\n"
            "    - 3\n"
            "- {}\n"
            "- []\n"
            "- null\n"
            "- true\n"
            "- false\n");
}

TEST(EmitYamlTest, NameFirstOnlyInSequenceElements) {
  const Json value = {
      {"a", {{"name", "x"}, {"image", "y"}}},
      {"b", {{{"value", "v"}, {"name", "FOO"}, {"image", "i"}}}}};
  EXPECT_EQ(EmitYaml(value),
            "a:\n"
            "  image: \"y\"\n"
            "  name: x\n"
            "b:\n"
            "- name: FOO\n"
            "  image: i\n"
            "  value: v\n");
}

TEST(EmitYamlTest, MetadataOrderOnlyAtTopLevel) {
  // A top-level array is not a Kubernetes object: its items get `name`
  // first and nothing else.
  const Json list = Json::array(
      {{{"metadata", {{"labels", {{"a", "b"}}}, {"name", "x"}}},
        {"apiVersion", "v1"},
        {"kind", "Pod"}}});
  EXPECT_EQ(EmitYaml(list),
            "- apiVersion: v1\n"
            "  kind: Pod\n"
            "  metadata:\n"
            "    labels:\n"
            "      a: b\n"
            "    name: x\n");
}

TEST(EmitYamlTest, QuotedKeys) {
  const Json value = {{"yes", 1}, {"on", 2},      {"1", 3},
                      {"nvidia.com/gpu", 4},      {"", 5},
                      {"a: b", 6}, {"line\nbreak", 7}};
  EXPECT_EQ(EmitYaml(value),
            "\"\": 5\n"
            "\"1\": 3\n"
            "\"a: b\": 6\n"
            "\"line\\nbreak\": 7\n"
            "nvidia.com/gpu: 4\n"
            "\"on\": 2\n"
            "\"yes\": 1\n");
}

TEST(EmitYamlTest, LongKeyUsesExplicitForm) {
  const std::string long_key(1100, 'k');
  const Json value = {{long_key, {{"a", 1}, {"b", Json::array({1})}}},
                      {"z", long_key}};
  const std::string yaml = EmitYaml(value);
  EXPECT_EQ(yaml, "? " + long_key + "\n: a: 1\n  b:\n  - 1\nz: " + long_key +
                      "\n");
  const YAML::Node parsed = YAML::Load(yaml);
  EXPECT_EQ(parsed[long_key]["a"].as<int>(), 1);
  EXPECT_EQ(parsed["z"].as<std::string>(), long_key);
}

TEST(EmitYamlTest, TopLevelScalars) {
  EXPECT_EQ(EmitYaml(nullptr), "null\n");
  EXPECT_EQ(EmitYaml(true), "true\n");
  EXPECT_EQ(EmitYaml(-7), "-7\n");
  EXPECT_EQ(EmitYaml(std::numeric_limits<std::uint64_t>::max()),
            "18446744073709551615\n");
  EXPECT_EQ(EmitYaml(1.5), "1.5\n");
  EXPECT_EQ(EmitYaml("torchrun"), "torchrun\n");
  EXPECT_EQ(EmitYaml("yes"), "\"yes\"\n");
  EXPECT_EQ(EmitYaml("a\nb\n"), "|\n  a\n  b\n");
  // No indentation indicator at the top level; quoted instead.
  EXPECT_EQ(EmitYaml(" a\nb"), "\" a\\nb\"\n");
  EXPECT_EQ(EmitYaml(Json::object()), "{}\n");
  EXPECT_EQ(EmitYaml(Json::array()), "[]\n");
  EXPECT_EQ(EmitYaml(Json::binary({1, 2})), "- 1\n- 2\n");
}

TEST(EmitYamlTest, InvalidUtf8BecomesReplacementCharacter) {
  const Json value = {{"k", "a\xff" "b\xc3"}};
  EXPECT_EQ(EmitYaml(value), "k: \"a\\uFFFDb\\uFFFD\"\n");
}

TEST(EmitYamlTest, Deterministic) {
  const Json value = Json::parse(
      R"({"b": [{"z": 1, "name": "q", "a": "x\ny"}], "a": {"c": 1, "b": 2}})");
  const std::string first = EmitYaml(value);
  EXPECT_EQ(first, EmitYaml(Json::parse(value.dump())));
  EXPECT_EQ(first, EmitYaml(value));
}

// ---------------------------------------------------------------------------
// Scalars.

TEST(DoubleQuoteYamlTest, Escapes) {
  EXPECT_EQ(DoubleQuoteYaml("say \"hi\"\\"), R"("say \"hi\"\\")");
  EXPECT_EQ(DoubleQuoteYaml("a\nb\tc\rd"), R"("a\nb\tc\rd")");
  EXPECT_EQ(DoubleQuoteYaml(std::string("\0\x01\x1b\x7f", 4)),
            R"("\x00\x01\x1B\x7F")");
  EXPECT_EQ(DoubleQuoteYaml("\xC2\x85|\xE2\x80\xA8|\xE2\x80\xA9|\xEF\xBB\xBF"),
            R"("\x85|\u2028|\u2029|\uFEFF")");
  EXPECT_EQ(DoubleQuoteYaml("\xC2\x80\xEF\xBF\xBF"), R"("\x80\uFFFF")");
  // Printable UTF-8 is written raw.
  EXPECT_EQ(DoubleQuoteYaml("caf\xC3\xA9 \xF0\x9F\x98\x80 \xC2\xA0"),
            "\"caf\xC3\xA9 \xF0\x9F\x98\x80 \xC2\xA0\"");
  EXPECT_EQ(DoubleQuoteYaml(" x "), "\" x \"");
}

TEST(FormatYamlKeyTest, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(FormatYamlKey("nvidia.com/gpu"), "nvidia.com/gpu");
  EXPECT_EQ(FormatYamlKey("on"), "\"on\"");
  EXPECT_EQ(FormatYamlKey("1"), "\"1\"");
}

TEST(FormatNumberTest, ShortestRoundTrip) {
  EXPECT_EQ(FormatNumber(2016.0), "2016");
  EXPECT_EQ(FormatNumber(-2016.0), "-2016");
  EXPECT_EQ(FormatNumber(0.0), "0");
  EXPECT_EQ(FormatNumber(-0.0), "0");
  EXPECT_EQ(FormatNumber(0.1), "0.1");
  EXPECT_EQ(FormatNumber(1.5), "1.5");
  EXPECT_EQ(FormatNumber(-2.5), "-2.5");
  EXPECT_EQ(FormatNumber(1e-7), "1.0e-07");
  EXPECT_EQ(FormatNumber(1.25e-7), "1.25e-07");
  EXPECT_EQ(FormatNumber(1e21), "1.0e+21");
  EXPECT_EQ(FormatNumber(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(FormatNumber(-9223372036854775808.0), "-9223372036854775808");
  EXPECT_EQ(FormatNumber(9223372036854775808.0), "9.223372036854776e+18");
  EXPECT_EQ(FormatNumber(12345678901234567e3), "1.2345678901234567e+19");
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::quiet_NaN()), ".nan");
  EXPECT_EQ(FormatNumber(std::numeric_limits<double>::infinity()), ".inf");
  EXPECT_EQ(FormatNumber(-std::numeric_limits<double>::infinity()), "-.inf");
}

TEST(FormatNumberTest, RoundTripsRandomBitPatterns) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const double d = std::bit_cast<double>(rng());
    if (!std::isfinite(d)) continue;
    const std::string text = FormatNumber(d);
    double back = 0;
    const auto result =
        std::from_chars(text.data(), text.data() + text.size(), back);
    ASSERT_EQ(result.ec, std::errc()) << text;
    ASSERT_EQ(result.ptr, text.data() + text.size()) << text;
    ASSERT_EQ(back, d) << text;
  }
}

const std::vector<std::string>& MustQuoteExamples() {
  static const auto* examples = new std::vector<std::string>{
      "", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true",
      "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off",
      "Off", "OFF", "~", "null", "Null", "NULL", "0123", "012", "0o12", "0x1F",
      "0b101", "+1", "-1", "1_000", "123", "0", "-0", "1e3", "1E3", "1.5", ".5",
      "1.", "+.inf", ".Inf", "-.INF", ".nan", ".NaN", "6.8523015e+5",
      "1_000.5", "1:30", "190:20:30.15", "2001-12-14",
      "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
      "2001-12-14T21:59:43Z", "<<", "=", "-", "?", ":", ",", "[", "]", "{",
      "}", "#", "&", "*", "!", "|", ">", "'", "\"", "%", "@", "`", "-foo",
      "?foo", ":foo", "- x", "? x", ": x", ",x", "[x]", "{x}", "#x", "&a",
      "*a", "!tag", "|x", ">x", "'x'", "\"x\"", "%TAG", "@x", "`x`", "---",
      "--- x", "...", "a: b", "a #b", "a:", "key: value", " x", "x ", " ",
      "\tx", "x\t", "a\tb", "a\nb", "a\n", "\n", "a\rb", "a\x01" "b",
      std::string("a\0b", 3), "a\x7f", "a\xC2\x85" "b", "a\xE2\x80\xA8" "b",
      "a\xE2\x80\xA9" "b", "\xEF\xBB\xBF" "a", "a\xC2\xA0" "b", "a\xff",
      "-1.5", "+.5", "0x", "0xdeadbeef", "-.inf", ".NAN", "inf", "-Infinity",
      "+nan", "0x1p-2", "12e5", "1:30:00", "8080:80", "1.2.3", "10.0.0.1"};
  return *examples;
}

const std::vector<std::string>& PlainExamples() {
  static const auto* examples = new std::vector<std::string>{
      "nvcr.io/nvidia/nemo:25.02", "kubeflow.org/v1", "app.kubernetes.io/name",
      "k8s.v1.cni.cncf.io/networks", "torchrun", "--nnodes=2", "/dev/shm",
      "512Gi", "nvidia.com/gpu", "trainer.max_steps=100", "a b c",
      "http://x:8000/v2", "v1", "ConfigMap", "IfNotPresent", "100m", "8Gi",
      "--master_port=29500", "python3", "a#b", "a-b", "it's", "x:y",
      "caf\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC", "pre-", "yesterday", "nope",
      "1Gi", "e3", "abc123", "a,b", "a[0]", "b{x}",
      "hi\xF0\x9F\x98\x80"};
  return *examples;
}

TEST(NeedsQuotesTest, MustQuote) {
  for (const std::string& s : MustQuoteExamples()) {
    EXPECT_TRUE(NeedsQuotes(s)) << Show(s);
  }
}

TEST(NeedsQuotesTest, OrdinaryKubernetesStringsStayPlain) {
  for (const std::string& s : PlainExamples()) {
    EXPECT_FALSE(NeedsQuotes(s)) << s;
  }
}

// ---------------------------------------------------------------------------
// Round trip through yaml-cpp.
//
// yaml-cpp resolves nothing itself: a plain scalar keeps the tag "?" and a
// quoted or block scalar "!". The resolver below applies the YAML 1.2 core
// schema; a second check applies the YAML 1.1 implicit types to every plain
// string, so a plain scalar is known to be a string to both readers.

// A POSIX extended regular expression that must match a whole string.
// (<regex.h> rather than std::regex: GCC 12's <regex> trips
// -Wmaybe-uninitialized under sanitizers, and it is much slower.)
class Pattern {
 public:
  explicit Pattern(const std::string& extended_regex) {
    const std::string anchored = "^(" + extended_regex + ")$";
    compiled_ =
        regcomp(&regex_, anchored.c_str(), REG_EXTENDED | REG_NOSUB) == 0;
  }
  ~Pattern() {
    if (compiled_) regfree(&regex_);
  }
  Pattern(const Pattern&) = delete;
  Pattern& operator=(const Pattern&) = delete;

  bool compiled() const { return compiled_; }
  // No implicit YAML type contains NUL, which would end the C string early.
  bool Matches(const std::string& s) const {
    return compiled_ && s.find('\0') == std::string::npos &&
           regexec(&regex_, s.c_str(), 0, nullptr, 0) == 0;
  }

 private:
  regex_t regex_;
  bool compiled_ = false;
};

// The YAML 1.1 implicit types (yaml.org/type): a plain scalar matching one is
// not a string to a YAML 1.1 reader. The empty string (null) is checked
// separately because POSIX leaves empty alternatives undefined.
struct Yaml11Types {
  Pattern bool_value{
      "y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|"
      "on|On|ON|off|Off|OFF"};
  Pattern null_value{"~|null|Null|NULL"};
  Pattern int_value{
      "[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|"
      "[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+"};
  Pattern float_value{
      "[-+]?([0-9][0-9_]*)?\\.[0-9_]*([eE][-+][0-9]+)?|"
      "[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*|"
      "[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)"};
  Pattern timestamp{
      "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|"
      "[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?"
      "([Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9]"
      // The spec's regex misplaces a parenthesis; this is PyYAML's, which
      // accepts the spec's own example `2001-12-14 21:59:43.10 -5`.
      "(\\.[0-9]*)?([ \t]*(Z|[-+][0-9][0-9]?(:[0-9][0-9])?))?"};
  Pattern merge_or_value{"<<|="};

  bool AllCompiled() const {
    return bool_value.compiled() && null_value.compiled() &&
           int_value.compiled() && float_value.compiled() &&
           timestamp.compiled() && merge_or_value.compiled();
  }
  bool IsString(const std::string& s) const {
    return !s.empty() && !bool_value.Matches(s) && !null_value.Matches(s) &&
           !int_value.Matches(s) && !float_value.Matches(s) &&
           !timestamp.Matches(s) && !merge_or_value.Matches(s);
  }
};

const Yaml11Types& Yaml11() {
  static const auto* types = new Yaml11Types;
  return *types;
}

// The YAML 1.2 core schema's implicit types.
struct CoreSchema {
  Pattern null_value{"null|Null|NULL|~"};
  Pattern bool_value{"true|True|TRUE|false|False|FALSE"};
  Pattern int10{"[-+]?[0-9]+"};
  Pattern int8{"0o[0-7]+"};
  Pattern int16{"0x[0-9a-fA-F]+"};
  Pattern float_value{
      "[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?"};
  Pattern infinity{"[-+]?\\.(inf|Inf|INF)"};
  Pattern not_a_number{"\\.(nan|NaN|NAN)"};

  bool AllCompiled() const {
    return null_value.compiled() && bool_value.compiled() &&
           int10.compiled() && int8.compiled() && int16.compiled() &&
           float_value.compiled() && infinity.compiled() &&
           not_a_number.compiled();
  }
};

const CoreSchema& Core() {
  static const auto* schema = new CoreSchema;
  return *schema;
}

// The value a YAML 1.2 core-schema reader gives a plain scalar.
Json ResolvePlain(const std::string& s) {
  const CoreSchema& core = Core();
  if (s.empty() || core.null_value.Matches(s)) return nullptr;
  if (core.bool_value.Matches(s)) return s[0] == 't' || s[0] == 'T';
  if (core.int10.Matches(s)) {
    const std::string digits = s[0] == '+' ? s.substr(1) : s;
    std::int64_t signed_value = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(),
                             signed_value);
    if (r.ec == std::errc()) return signed_value;
    std::uint64_t unsigned_value = 0;
    r = std::from_chars(digits.data(), digits.data() + digits.size(),
                        unsigned_value);
    if (r.ec == std::errc()) return unsigned_value;
    return std::stod(digits);
  }
  if (core.int8.Matches(s)) return std::stoll(s.substr(2), nullptr, 8);
  if (core.int16.Matches(s)) {
    return std::stoll(s.substr(2), nullptr, 16);
  }
  if (core.float_value.Matches(s)) {
    const std::string text = s[0] == '+' ? s.substr(1) : s;
    double value = 0;
    std::from_chars(text.data(), text.data() + text.size(), value);
    return value;
  }
  if (core.infinity.Matches(s)) {
    return s[0] == '-' ? -std::numeric_limits<double>::infinity()
                       : std::numeric_limits<double>::infinity();
  }
  if (core.not_a_number.Matches(s)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return s;
}

// The resolvers below are the oracle for the property test; check them.
TEST(TestResolverTest, PatternsCompileAndClassify) {
  ASSERT_TRUE(Yaml11().AllCompiled());
  ASSERT_TRUE(Core().AllCompiled());
  for (const char* s :
       {"yes", "Off", "~", "0123", "0b101", "1_000", "1:30", "0x1F", "1.5",
        ".5", "1.", "190:20:30.15", "-.INF", ".NaN", "2001-12-14",
        "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "<<",
        "="}) {
    EXPECT_FALSE(Yaml11().IsString(s)) << s;
  }
  for (const char* s : {"1e3", "0o12", "torchrun", "512Gi", "y-1", "2001-1"}) {
    EXPECT_TRUE(Yaml11().IsString(s)) << s;
  }
  EXPECT_EQ(ResolvePlain("null"), Json(nullptr));
  EXPECT_EQ(ResolvePlain("True"), Json(true));
  EXPECT_EQ(ResolvePlain("-12"), Json(-12));
  EXPECT_EQ(ResolvePlain("18446744073709551615"),
            Json(std::numeric_limits<std::uint64_t>::max()));
  EXPECT_EQ(ResolvePlain("0o12"), Json(10));
  EXPECT_EQ(ResolvePlain("0x1F"), Json(31));
  EXPECT_EQ(ResolvePlain("1.0e-07"), Json(1e-7));
  EXPECT_EQ(ResolvePlain("+.5"), Json(0.5));
  EXPECT_EQ(ResolvePlain("-.inf"),
            Json(-std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(std::isnan(ResolvePlain(".NaN").get<double>()));
  for (const char* s : {"yes", "on", "0123x", "1:30", "2001-12-14", "1_000",
                        "torchrun", "1.2.3"}) {
    EXPECT_EQ(ResolvePlain(s), Json(s)) << s;
  }
}

// Converts what yaml-cpp read back into JSON, recording anything that could
// not have come from EmitYaml's rules in `problems`.
Json ToJson(const YAML::Node& node, std::vector<std::string>& problems) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      if (node.Tag() == "!") return text;
      if (node.Tag() != "?") {
        problems.push_back("unexpected tag " + node.Tag());
        return nullptr;
      }
      Json value = ResolvePlain(text);
      if (value.is_string()) {
        if (NeedsQuotes(text)) {
          problems.push_back("plain scalar that NeedsQuotes: " + Show(text));
        }
        if (!Yaml11().IsString(text)) {
          problems.push_back("plain scalar is not a YAML 1.1 string: " +
                             Show(text));
        }
      }
      return value;
    }
    case YAML::NodeType::Sequence: {
      Json array = Json::array();
      for (const YAML::Node& item : node) {
        array.push_back(ToJson(item, problems));
      }
      return array;
    }
    case YAML::NodeType::Map: {
      Json object = Json::object();
      for (const auto& entry : node) {
        const Json key = ToJson(entry.first, problems);
        if (!key.is_string()) {
          problems.push_back("non-string key " + key.dump());
          continue;
        }
        const std::string& name = key.get_ref<const std::string&>();
        if (object.contains(name)) {
          problems.push_back("duplicate key " + Show(name));
        }
        object[name] = ToJson(entry.second, problems);
      }
      return object;
    }
    case YAML::NodeType::Undefined:
      break;
  }
  problems.push_back("undefined node");
  return nullptr;
}

::testing::AssertionResult RoundTrips(const Json& input) {
  const std::string yaml = EmitYaml(input);
  const auto failure = [&](const std::string& why) {
    return ::testing::AssertionFailure()
           << why << "\ninput: " << Show(input) << "\nyaml:\n" << yaml;
  };
  if (yaml.empty() || yaml.back() != '\n' ||
      (yaml.size() >= 2 && yaml[yaml.size() - 2] == '\n')) {
    return failure("document does not end in exactly one newline");
  }
  if (yaml.find('\r') != std::string::npos) return failure("raw CR");
  if (yaml.starts_with("---")) return failure("starts with ---");
  if (yaml != EmitYaml(input)) return failure("not deterministic");
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(yaml);
  } catch (const YAML::Exception& e) {
    return failure(std::string("yaml-cpp: ") + e.what());
  }
  if (documents.size() != 1) {
    return failure(std::to_string(documents.size()) + " documents");
  }
  std::vector<std::string> problems;
  const Json output = ToJson(documents[0], problems);
  if (!problems.empty()) return failure(problems.front());
  if (output != input) {
    return failure("read back as " + Show(output));
  }
  return ::testing::AssertionSuccess();
}

// Pieces that random strings are made of: everything NeedsQuotes must catch,
// ordinary Kubernetes text, and whitespace and line breaks that literal
// blocks must preserve.
std::vector<std::string> Fragments() {
  std::vector<std::string> fragments = MustQuoteExamples();
  // Invalid UTF-8 deliberately does not round-trip (it becomes U+FFFD).
  std::erase(fragments, std::string("a\xff"));
  for (const std::string& s : PlainExamples()) fragments.push_back(s);
  for (const char* s :
       {" ", "  ", "\n", "\n\n", "\n\n\n", "\t", ": ", " #", "#", "\\", "\\n",
        "'", "\"", "\r", "\r\n", "\x1b", "\xC2\x80", "\xEF\xBF\xBE",
        "\xF0\x9F\x98\x80", "  indented", "trailing  ", "line\n", "\nlead",
        "a\n  b", "x\n\n", " x\ny", "\t\n", " \n", "\n ", "\n  \n",
        "#!/bin/bash\nset -e\n", "name", "value", "-", "--", "- ", "? ", "...",
        "---\n", "a", "Z", "9", "."}) {
    fragments.emplace_back(s);
  }
  return fragments;
}

class RandomJson {
 public:
  explicit RandomJson(std::uint32_t seed)
      : rng_(seed), fragments_(Fragments()) {
    for (const char* key : {"name", "apiVersion", "kind", "metadata",
                            "namespace", "labels", "annotations"}) {
      kubernetes_keys_.emplace_back(key);
    }
  }

  Json Value(int depth) {
    const int kind = Pick(depth >= 5 ? 6 : 9);
    if (kind == 6 || kind == 7) return Object(depth);
    if (kind == 8) return Array(depth);
    return Scalar();
  }

  Json Object(int depth) {
    Json object = Json::object();
    const int size = Pick(5);
    for (int i = 0; i < size; ++i) {
      // Well-known keys exercise the special orders (`name` first, ...).
      const std::string key =
          Pick(4) == 0 ? kubernetes_keys_[Pick(kubernetes_keys_.size())]
                       : String();
      object[key] = Value(depth + 1);
    }
    return object;
  }

  Json Array(int depth) {
    Json array = Json::array();
    const int size = Pick(5);
    for (int i = 0; i < size; ++i) array.push_back(Value(depth + 1));
    return array;
  }

  Json Scalar() {
    switch (Pick(10)) {
      case 0:
        return nullptr;
      case 1:
        return Pick(2) == 0;
      case 2:
        return Integer();
      case 3:
        return Double();
      default:
        return String();
    }
  }

  std::string String() {
    const int parts = Pick(12) == 0 ? 0 : 1 + Pick(3);
    std::string s;
    for (int i = 0; i < parts; ++i) s += fragments_[Pick(fragments_.size())];
    return s;
  }

 private:
  int Pick(size_t n) {
    return static_cast<int>(
        std::uniform_int_distribution<size_t>(0, n - 1)(rng_));
  }

  Json Integer() {
    switch (Pick(5)) {
      case 0:
        return std::numeric_limits<std::int64_t>::min() + Pick(3);
      case 1:
        return std::numeric_limits<std::uint64_t>::max() - Pick(3);
      case 2:
        return std::uniform_int_distribution<std::int64_t>()(rng_);
      default:
        return Pick(2001) - 1000;
    }
  }

  Json Double() {
    static constexpr double kSpecial[] = {
        0.1, 1e-7, 1e21, -0.0, 0.0, 2016.0, -2.5, 1.5, 6.8523015e+5, 1e300,
        5e-324, 9007199254740993.0, 1.8446744073709552e19, 0.30000000000000004};
    switch (Pick(3)) {
      case 0:
        return kSpecial[Pick(std::size(kSpecial))];
      case 1:
        return std::uniform_real_distribution<double>(-1e6, 1e6)(rng_);
      default: {
        double d = 0;
        do {
          d = std::bit_cast<double>(
              std::uniform_int_distribution<std::uint64_t>()(rng_));
        } while (!std::isfinite(d));
        return d;
      }
    }
  }

  std::mt19937 rng_;
  std::vector<std::string> fragments_;
  std::vector<std::string> kubernetes_keys_;
};

int CountOccurrences(std::string_view text, std::string_view needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

TEST(EmitYamlPropertyTest, RandomValuesRoundTripThroughYamlCpp) {
  RandomJson random(20250214);
  constexpr int kCases = 6000;
  // How often each form was produced, so a change to the generator cannot
  // quietly stop exercising one.
  std::map<std::string, int> forms = {
      {" |-\n", 0}, {" |\n", 0},  {" |+\n", 0}, {" |2", 0},
      {": \"", 0},  {"- \"", 0},  {"\\n\"\n", 0}, {"- - ", 0},
      {": {}", 0},  {"- []", 0},  {"- --", 0}};
  for (int i = 0; i < kCases; ++i) {
    // Mostly objects, as Kubernetes documents are; sometimes anything.
    const Json input = i % 4 == 0 ? random.Value(0) : random.Object(0);
    ASSERT_TRUE(RoundTrips(input)) << "case " << i;
    const std::string yaml = EmitYaml(input);
    for (auto& [form, count] : forms) count += CountOccurrences(yaml, form);
  }
  for (const auto& [form, count] : forms) {
    EXPECT_GE(count, 20) << "form " << Show(form) << " seen " << count;
  }
}

TEST(EmitYamlPropertyTest, EveryFragmentRoundTripsAsValueAndKey) {
  for (const std::string& s : Fragments()) {
    ASSERT_TRUE(RoundTrips(s));
    ASSERT_TRUE(RoundTrips(Json{{s, s}}));
    ASSERT_TRUE(RoundTrips(Json{{"k", Json::array({s, s})}, {"z", 1}}));
  }
}

}  // namespace
}  // namespace nemoc
