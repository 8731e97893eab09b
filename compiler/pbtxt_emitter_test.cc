#include "pbtxt_emitter.h"

#include <gtest/gtest.h>

#include "../tests/pbtxt_test_parser.h"

namespace nemoc {
namespace {

using nlohmann::json;

json Enum(const char* name) { return {{"$enum", name}}; }

std::string Emit(const json& message) {
  std::string out, err;
  EXPECT_TRUE(EmitPbtxt(message, &out, &err)) << err;
  return out;
}

TEST(PbtxtEmitterTest, TritonShapeWithNameFirst) {
  const json config = {
      {"name", "llama"},
      {"backend", "tensorrtllm"},
      {"max_batch_size", 64},
      {"input", json::array({{{"name", "input_ids"}, {"data_type", Enum("TYPE_INT32")}, {"dims", {-1}}},
                             {{"name", "input_lengths"}, {"data_type", Enum("TYPE_INT32")}, {"dims", {1}},
                              {"reshape", {{"shape", json::array()}}}}})},
      {"instance_group", json::array({{{"count", 1}, {"kind", Enum("KIND_CPU")}}})},
      {"parameters", json::array({{{"key", "gpt_model_path"}, {"value", {{"string_value", "/e"}}}}})},
  };
  EXPECT_EQ(
      "name: \"llama\"\n"
      "backend: \"tensorrtllm\"\n"
      "input [\n"
      "  {\n"
      "    name: \"input_ids\"\n"
      "    data_type: TYPE_INT32\n"
      "    dims: [-1]\n"
      "  },\n"
      "  {\n"
      "    name: \"input_lengths\"\n"
      "    data_type: TYPE_INT32\n"
      "    dims: [1]\n"
      "    reshape {\n"
      "      shape: []\n"
      "    }\n"
      "  }\n"
      "]\n"
      "instance_group [\n"
      "  {\n"
      "    count: 1\n"
      "    kind: KIND_CPU\n"
      "  }\n"
      "]\n"
      "max_batch_size: 64\n"
      "parameters [\n"
      "  {\n"
      "    key: \"gpt_model_path\"\n"
      "    value {\n"
      "      string_value: \"/e\"\n"
      "    }\n"
      "  }\n"
      "]\n",
      Emit(config));
}

TEST(PbtxtEmitterTest, StringsAreEscaped) {
  EXPECT_EQ("\"plain\"", QuotePbtxt("plain"));
  EXPECT_EQ("\"a\\\"b\\\\c\\nd\\te\\r\"", QuotePbtxt("a\"b\\c\nd\te\r"));
  EXPECT_EQ("\"\\000\\001\\037\\177\"", QuotePbtxt(std::string("\0\x01\x1f\x7f", 4)));
  EXPECT_EQ("\"caf\xc3\xa9\"", QuotePbtxt("caf\xc3\xa9"));
  // A value trying to close the string and add a field stays one string.
  EXPECT_EQ("name: \"x\\\"\\nbackend: \\\"python\"\n", Emit({{"name", "x\"\nbackend: \"python"}}));
}

TEST(PbtxtEmitterTest, ScalarsAndArrays) {
  EXPECT_EQ("b: true\nf: 0.9\ni: -3\nl: [1, 2]\ns: [\"a\", \"b\"]\n",
            Emit({{"b", true}, {"f", 0.9}, {"i", -3}, {"l", {1, 2}}, {"s", {"a", "b"}}}));
  EXPECT_EQ("e: []\n", Emit({{"e", json::array()}}));
}

TEST(PbtxtEmitterTest, RefusesWhatTextFormatCannotSay) {
  std::string out = "unchanged", err;
  EXPECT_FALSE(EmitPbtxt(json::array(), &out, &err));
  EXPECT_FALSE(EmitPbtxt({{"a", nullptr}}, &out, &err));
  EXPECT_EQ("a: null has no protobuf text form", err);
  EXPECT_FALSE(EmitPbtxt({{"bad-name", 1}}, &out, &err));
  EXPECT_EQ("bad-name: not a protobuf field name", err);
  EXPECT_FALSE(EmitPbtxt({{"m", {{"l", json::array({json::array({1})})}}}}, &out, &err));
  EXPECT_EQ("m.l: nested arrays have no protobuf text form", err);
  EXPECT_FALSE(EmitPbtxt({{"l", json::array({json(1), json::object({{"x", 1}})})}}, &out, &err));
  EXPECT_EQ("l: an array mixes messages and scalars", err);
  EXPECT_FALSE(EmitPbtxt({{"k", Enum("not an identifier")}}, &out, &err));
  EXPECT_EQ("k: an enum value must be an identifier", err);
  EXPECT_EQ("unchanged", out);
}

TEST(PbtxtEmitterTest, RoundTripsThroughTheTestParser) {
  const json config = {
      {"name", "m\"odel\\\n\t\x01"},
      {"max_batch_size", 8},
      {"dynamic_batching", {{"preferred_batch_size", {8}}, {"max_queue_delay_microseconds", 100}}},
      {"output", json::array({{{"name", "output_ids"}, {"data_type", Enum("TYPE_INT32")}, {"dims", {-1, -1}}}})},
      {"parameters", json::array({{{"key", "a"}, {"value", {{"string_value", "1"}}}},
                                  {{"key", "b"}, {"value", {{"string_value", "x y"}}}}})},
      {"model_transaction_policy", {{"decoupled", false}}},
      {"ratio", 0.25},
  };
  json parsed;
  std::string err;
  ASSERT_TRUE(testing::ParsePbtxtForTest(Emit(config), &parsed, &err)) << err;
  EXPECT_EQ(config, parsed);
}

TEST(PbtxtEmitterTest, TestParserReadsTritonDocumentationStyle) {
  // Seed 001's hand-written config: repeated `parameters { ... }` blocks, no colons.
  json parsed;
  std::string err;
  ASSERT_TRUE(testing::ParsePbtxtForTest(
      "name: \"llama-finetuned\"\nbackend: \"tensorrtllm\"\nmax_batch_size: 64\n"
      "instance_group [ { count: 1 kind: KIND_GPU gpus: [0] } ]\n"
      "parameters {\n  key: \"a\"\n  value: { string_value: \"8192\" }\n}\n"
      "parameters {\n  key: \"b\"\n  value: { string_value: \"inflight_fused_batching\" }\n}\n",
      &parsed, &err))
      << err;
  EXPECT_EQ(64, parsed["max_batch_size"]);
  EXPECT_EQ(Enum("KIND_GPU"), parsed["instance_group"][0]["kind"]);
  ASSERT_EQ(2u, parsed["parameters"].size());
  EXPECT_EQ("inflight_fused_batching", parsed["parameters"][1]["value"]["string_value"]);
  EXPECT_FALSE(testing::ParsePbtxtForTest("name: \"unterminated\n", &parsed, &err));
  EXPECT_FALSE(testing::ParsePbtxtForTest("a { b: 1\n", &parsed, &err));
}

}  // namespace
}  // namespace nemoc
