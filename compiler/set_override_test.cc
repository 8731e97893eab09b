#include "set_override.h"

#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "spec_loader.h"

namespace nemoc {
namespace {

using nlohmann::json;

std::string Messages(const Diagnostics& d) {
  std::string out;
  for (const Diagnostic& x : d.items()) {
    out += std::string(SeverityName(x.severity)) + " [" + x.code + "] " +
           x.location.file + ":" + std::to_string(x.location.line) + ": " +
           x.message + "\n";
  }
  return out;
}

const char kSpec[] =
    "apiVersion: nemoc.dev/v1alpha1\n"      // 1
    "kind: Project\n"                      // 2
    "metadata: {name: demo}\n"             // 3
    "spec:\n"                              // 4
    "  namespace: ml\n"                    // 5
    "  stages:\n"                          // 6
    "    train:\n"                         // 7
    "      nodes: 2\n"                     // 8
    "      mode: sft\n"                    // 9
    "  targets:\n"                         // 10
    "    - name: onprem\n"                 // 11
    "      profile: vanilla-k8s\n";        // 12

Document LoadDoc() {
  Document doc;
  Diagnostics diags;
  EXPECT_TRUE(LoadSpecText("spec.yaml", kSpec, &doc, &diags)) << Messages(diags);
  return doc;
}

// ---------------------------------------------------------------------------
// DottedToPointer

TEST(SetOverrideTestDotted, WellFormed) {
  const std::pair<const char*, const char*> cases[] = {
      {"a", "/a"},
      {"a.b.c", "/a/b/c"},
      {"a[0].b", "/a/0/b"},
      {"a.0.b", "/a/0/b"},
      {"a[0][12]", "/a/0/12"},
      {"a[3]", "/a/3"},
      {"a[007]", "/a/7"},  // indices in brackets are canonical
      {"a[999999999]", "/a/999999999"},
      {"a.007", "/a/007"},  // after a dot it may be a mapping key
      {"spec.targets[0].name", "/spec/targets/0/name"},
      {"spec.targets[eks].rdma", "/spec/targets/eks/rdma"},  // an item by name, resolved when applied
      {"a[x~y/z]", "/a/x~0y~1z"},
      {"x.a~b", "/x/a~0b"},
      {"x.a/b", "/x/a~1b"},
      {"labels.nvidia~com/gpu", "/labels/nvidia~0com~1gpu"},
  };
  for (const auto& [dotted, want] : cases) {
    std::string pointer = "garbage";
    EXPECT_TRUE(DottedToPointer(dotted, &pointer)) << dotted;
    EXPECT_EQ(pointer, want) << dotted;
  }
}

TEST(SetOverrideTestDotted, Malformed) {
  for (const char* dotted : {"", ".", "a..b", "a.", ".a", "a[", "a[x.y]", "a[x[0]]", "a[]",
                             "a[0].", "a[0]..b", "a.b[1", "a[1234567890]"}) {
    std::string pointer;
    EXPECT_FALSE(DottedToPointer(dotted, &pointer)) << '"' << dotted << "\" -> " << pointer;
  }
}

// ---------------------------------------------------------------------------
// ApplySetOverride: values

struct Case {
  const char* assignment;
  const char* pointer;
  json want;
};

TEST(SetOverrideTestApply, ValuesAreTypedAsYaml) {
  const Case cases[] = {
      {"spec.stages.train.nodes=4", "/spec/stages/train/nodes", 4},
      {"spec.stages.train.nodes=\"4\"", "/spec/stages/train/nodes", "4"},
      {"spec.stages.train.nodes='4'", "/spec/stages/train/nodes", "4"},
      {"spec.stages.train.mode=lora", "/spec/stages/train/mode", "lora"},
      {"spec.stages.train.enabled=true", "/spec/stages/train/enabled", true},
      {"spec.stages.train.enabled=false", "/spec/stages/train/enabled", false},
      // YAML 1.2: "yes" stays a string.
      {"spec.stages.train.enabled=yes", "/spec/stages/train/enabled", "yes"},
      {"spec.stages.train.lr=1.5e-4", "/spec/stages/train/lr", 1.5e-4},
      {"spec.stages.train.nodes=", "/spec/stages/train/nodes", nullptr},
      {"spec.stages.train.nodes=null", "/spec/stages/train/nodes", nullptr},
      {"spec.imagePullSecrets=[a, b]", "/spec/imagePullSecrets", json::array({"a", "b"})},
      {"spec.imagePullSecrets=[]", "/spec/imagePullSecrets", json::array()},
      {"spec.image={repository: r, tag: \"24.07\"}", "/spec/image",
       json({{"repository", "r"}, {"tag", "24.07"}})},
      {"spec.stages.train.note=a=b", "/spec/stages/train/note", "a=b"},
      {"spec.stages.train.note= padded ", "/spec/stages/train/note", "padded"},
      {"spec.targets[0].name=cloud", "/spec/targets/0/name", "cloud"},
      {"spec.targets.0.name=cloud", "/spec/targets/0/name", "cloud"},
  };
  for (const Case& c : cases) {
    Document doc = LoadDoc();
    Diagnostics diags;
    EXPECT_TRUE(ApplySetOverride(c.assignment, &doc, &diags)) << c.assignment << "\n"
                                                              << Messages(diags);
    EXPECT_TRUE(diags.empty()) << c.assignment << "\n" << Messages(diags);
    EXPECT_EQ(doc.root.at(json::json_pointer(c.pointer)), c.want) << c.assignment;
    // Neighbours are untouched.
    EXPECT_EQ(doc.root["spec"]["namespace"], "ml") << c.assignment;
    EXPECT_EQ(doc.root["spec"]["targets"][0]["profile"], "vanilla-k8s") << c.assignment;
  }
}

TEST(SetOverrideTestApply, IntegerIsAnIntegerNotAString) {
  Document doc = LoadDoc();
  Diagnostics diags;
  ASSERT_TRUE(ApplySetOverride("spec.stages.train.nodes=8", &doc, &diags));
  const json& v = doc.root["spec"]["stages"]["train"]["nodes"];
  EXPECT_TRUE(v.is_number_integer());
  EXPECT_EQ(v.get<int>(), 8);
  ASSERT_TRUE(ApplySetOverride("spec.stages.train.nodes=\"8\"", &doc, &diags));
  EXPECT_TRUE(doc.root["spec"]["stages"]["train"]["nodes"].is_string());
}

TEST(SetOverrideTestApply, ReplacesAWholeSubtree) {
  Document doc = LoadDoc();
  Diagnostics diags;
  ASSERT_TRUE(ApplySetOverride("spec.stages.train={nodes: 1}", &doc, &diags)) << Messages(diags);
  EXPECT_EQ(doc.root["spec"]["stages"]["train"], json({{"nodes", 1}}));
}

TEST(SetOverrideTestApply, CreatesMissingIntermediateMappings) {
  Document doc = LoadDoc();
  Diagnostics diags;
  ASSERT_TRUE(ApplySetOverride("spec.storage.results.nfs.server=nfs.internal", &doc, &diags))
      << Messages(diags);
  EXPECT_EQ(doc.root["spec"]["storage"],
            json::parse(R"({"results": {"nfs": {"server": "nfs.internal"}}})"));
  // Below an existing list item too.
  ASSERT_TRUE(ApplySetOverride("spec.targets[0].rdma.count=8", &doc, &diags)) << Messages(diags);
  EXPECT_EQ(doc.root["spec"]["targets"][0]["rdma"], json({{"count", 8}}));
  EXPECT_EQ(doc.root["spec"]["targets"][0]["name"], "onprem");
}

TEST(SetOverrideTestApply, NullParentBecomesAMapping) {
  Document doc;
  Diagnostics diags;
  ASSERT_TRUE(LoadSpecText("spec.yaml", "spec:\n  stages:\n", &doc, &diags));
  ASSERT_TRUE(doc.root["spec"]["stages"].is_null());
  ASSERT_TRUE(ApplySetOverride("spec.stages.train.nodes=2", &doc, &diags)) << Messages(diags);
  EXPECT_EQ(doc.root, json::parse(R"({"spec": {"stages": {"train": {"nodes": 2}}}})"));
}

TEST(SetOverrideTestApply, SlashAndTildeInKeysAreEscapedInThePointer) {
  Document doc = LoadDoc();
  Diagnostics diags;
  ASSERT_TRUE(ApplySetOverride("metadata.labels.team/x~y=ml", &doc, &diags)) << Messages(diags);
  EXPECT_EQ(doc.root["metadata"]["labels"], json({{"team/x~y", "ml"}}));
  EXPECT_EQ(doc.map.Locate("/metadata/labels/team~1x~0y").file,
            "--set metadata.labels.team/x~y=ml");
}

// ---------------------------------------------------------------------------
// ApplySetOverride: refusals

void ExpectRefused(const std::string& assignment, const std::string& code,
                   const std::string& message) {
  Document doc = LoadDoc();
  const json before = doc.root;
  Diagnostics diags;
  EXPECT_FALSE(ApplySetOverride(assignment, &doc, &diags)) << assignment;
  ASSERT_EQ(diags.items().size(), 1u) << assignment << "\n" << Messages(diags);
  const Diagnostic& d = diags.items()[0];
  EXPECT_EQ(d.severity, Severity::kError) << assignment;
  EXPECT_EQ(d.code, code) << assignment;
  EXPECT_EQ(d.message, message) << assignment;
  EXPECT_EQ(d.location.file, "--set " + assignment);
  EXPECT_EQ(d.location.line, 0);
  EXPECT_EQ(doc.root, before) << assignment << ": the document must not change";
}

TEST(SetOverrideTestRefuse, MissingEquals) {
  ExpectRefused("spec.stages.train.nodes", "set.syntax",
                "expected --set path=value, e.g. spec.stages.train.nodes=4");
}

TEST(SetOverrideTestRefuse, MalformedPath) {
  ExpectRefused("spec..nodes=4", "set.syntax",
                "expected --set path=value, e.g. spec.stages.train.nodes=4");
  ExpectRefused("=4", "set.syntax",
                "expected --set path=value, e.g. spec.stages.train.nodes=4");
  ExpectRefused("spec.targets[x.y]=4", "set.syntax",
                "expected --set path=value, e.g. spec.stages.train.nodes=4");
}

TEST(SetOverrideTestRefuse, NewlinesInTheValue) {
  ExpectRefused("spec.namespace=a\nkind: Other", "set.syntax",
                "a --set value must be on one line");
  ExpectRefused("spec.namespace=a\rb", "set.syntax", "a --set value must be on one line");
}

TEST(SetOverrideTestRefuse, MissingListItem) {
  ExpectRefused("spec.targets[1].name=x", "set.path", "spec.targets has no item 1");
  ExpectRefused("spec.targets.name=x", "set.path", "spec.targets has no item named name");
  ExpectRefused("spec.targets[onprme].gpu=x", "set.path", "spec.targets has no item named onprme");
}

TEST(SetOverrideTestApply, ListItemsByName) {
  // spec.targets[onprem] and spec.targets.onprem are the target named onprem.
  for (const char* assignment : {"spec.targets[onprem].rdma.count=4", "spec.targets.onprem.rdma.count=4"}) {
    Document doc = LoadDoc();
    Diagnostics diags;
    ASSERT_TRUE(ApplySetOverride(assignment, &doc, &diags)) << Messages(diags);
    EXPECT_EQ(doc.root["spec"]["targets"][0]["rdma"]["count"], 4) << assignment;
    EXPECT_EQ(doc.map.Locate("/spec/targets/0/rdma/count").file, std::string("--set ") + assignment);
  }
  Document doc = LoadDoc();
  Diagnostics diags;
  EXPECT_FALSE(ApplySetOverride("spec.targets[onprme].gpu=x", &doc, &diags));
  ASSERT_EQ(diags.items().size(), 1u);
  EXPECT_EQ(diags.items()[0].hint, "did you mean onprem?");
  Diagnostics unnamed;
  EXPECT_FALSE(ApplySetOverride("spec.targets[x].gpu=x", &doc, &unnamed));
  EXPECT_EQ(unnamed.items()[0].hint, "its items are named onprem");
}

TEST(SetOverrideTestRefuse, NonContainerParent) {
  ExpectRefused("spec.namespace.name=x", "set.path", "spec.namespace is not a mapping or list");
  ExpectRefused("spec.stages.train.nodes[0]=1", "set.path",
                "spec.stages.train.nodes is not a mapping or list");
}

TEST(SetOverrideTestRefuse, UnreadableValue) {
  Document doc = LoadDoc();
  Diagnostics diags;
  EXPECT_FALSE(ApplySetOverride("spec.imagePullSecrets=[a, b", &doc, &diags));
  ASSERT_FALSE(diags.items().empty());
  for (const Diagnostic& d : diags.items()) {
    EXPECT_EQ(d.code, "set.value");
    EXPECT_EQ(d.message.rfind("cannot read the value: invalid YAML", 0), 0u) << d.message;
    EXPECT_EQ(d.location.file, "--set spec.imagePullSecrets=[a, b");
  }
  EXPECT_EQ(doc.root["spec"].count("imagePullSecrets"), 0u);
}

// ---------------------------------------------------------------------------
// Source map

TEST(SetOverrideTestSourceMap, OverriddenPointerAndChildrenAreLocatedAtTheFlag) {
  Document doc = LoadDoc();
  // Before: from the file.
  Location before = doc.map.Locate("/spec/stages/train/nodes");
  EXPECT_EQ(before.file, "spec.yaml");
  EXPECT_EQ(before.line, 8);
  EXPECT_EQ(before.column, 14);

  Diagnostics diags;
  const std::string assignment = "spec.stages.train={nodes: 1, mode: lora}";
  ASSERT_TRUE(ApplySetOverride(assignment, &doc, &diags)) << Messages(diags);
  for (const char* p : {"/spec/stages/train", "/spec/stages/train/nodes",
                        "/spec/stages/train/mode", "/spec/stages/train/missing/deep"}) {
    Location l = doc.map.Locate(p);
    EXPECT_EQ(l.file, "--set " + assignment) << p;
    EXPECT_EQ(l.line, 0) << p;
    EXPECT_EQ(l.column, 0) << p;
    EXPECT_FALSE(l.known()) << p;
  }
  // The parent and siblings still come from the file.
  Location stages = doc.map.Locate("/spec/stages");
  EXPECT_EQ(stages.file, "spec.yaml");
  EXPECT_EQ(stages.line, 7);
  Location ns = doc.map.Locate("/spec/namespace");
  EXPECT_EQ(ns.file, "spec.yaml");
  EXPECT_EQ(ns.line, 5);
  EXPECT_EQ(ns.column, 14);
}

TEST(SetOverrideTestSourceMap, ListItemOverride) {
  Document doc = LoadDoc();
  Diagnostics diags;
  ASSERT_TRUE(ApplySetOverride("spec.targets[0].profile=eks-efa", &doc, &diags));
  EXPECT_EQ(doc.map.Locate("/spec/targets/0/profile").file,
            "--set spec.targets[0].profile=eks-efa");
  Location name = doc.map.Locate("/spec/targets/0/name");
  EXPECT_EQ(name.file, "spec.yaml");
  EXPECT_EQ(name.line, 11);
  EXPECT_EQ(name.column, 13);
}

TEST(SetOverrideTestSourceMap, LaterOverrideOfAChildKeepsBothOrigins) {
  Document doc = LoadDoc();
  Diagnostics diags;
  ASSERT_TRUE(ApplySetOverride("spec.stages.train={nodes: 1}", &doc, &diags));
  ASSERT_TRUE(ApplySetOverride("spec.stages.train.nodes=3", &doc, &diags));
  EXPECT_EQ(doc.root["spec"]["stages"]["train"], json({{"nodes", 3}}));
  EXPECT_EQ(doc.map.Locate("/spec/stages/train/nodes").file, "--set spec.stages.train.nodes=3");
  EXPECT_EQ(doc.map.Locate("/spec/stages/train/mode").file, "--set spec.stages.train={nodes: 1}");
}

TEST(SetOverrideTestSourceMap, FailedOverrideRecordsNothing) {
  Document doc = LoadDoc();
  Diagnostics diags;
  ASSERT_FALSE(ApplySetOverride("spec.targets[4].name=x", &doc, &diags));
  EXPECT_EQ(doc.map.Locate("/spec/targets/4/name").file, "spec.yaml");
}

// Was a bug: the override was recorded at the raw pointer (/spec/targets/00)
// and only the first 9 digits of an index were read.
TEST(SetOverrideTestBug, IndexWithLeadingZerosIsLocatedAtTheFlag) {
  for (const std::string assignment : {"spec.targets[00].name=x", "spec.targets.00.name=x",
                                       "spec.targets[000000000].name=x"}) {
    Document doc = LoadDoc();
    Diagnostics diags;
    ASSERT_TRUE(ApplySetOverride(assignment, &doc, &diags)) << assignment << "\n"
                                                            << Messages(diags);
    EXPECT_EQ(doc.root["spec"]["targets"][0]["name"], "x") << assignment;
    EXPECT_EQ(doc.map.Locate("/spec/targets/0/name").file, "--set " + assignment);
    EXPECT_EQ(doc.map.Locate("/spec/targets/0/profile").file, "spec.yaml") << assignment;
  }
  {
    Document doc;
    Diagnostics diags;
    ASSERT_TRUE(LoadSpecText("spec.yaml", "l: [a, b]\n", &doc, &diags));
    ASSERT_TRUE(ApplySetOverride("l[01]=x", &doc, &diags)) << Messages(diags);
    EXPECT_EQ(doc.root["l"], json::array({"a", "x"}));
    EXPECT_EQ(doc.map.Locate("/l/1").file, "--set l[01]=x");
    EXPECT_EQ(doc.map.Locate("/l/0").file, "spec.yaml");
    // Ten digits: refused rather than truncated to item 0.
    EXPECT_FALSE(ApplySetOverride("l[0000000001]=y", &doc, &diags));
    EXPECT_FALSE(ApplySetOverride("l.0000000001=y", &doc, &diags));
    EXPECT_EQ(doc.root["l"], json::array({"a", "x"}));
  }
}

}  // namespace
}  // namespace nemoc

namespace nemoc {
namespace {

// An env reference under a credential-like name is scanned as the spec line
// it stands for (HF_TOKEN: {secretKeyRef: ...}), not refused as a plain-text
// credential; a literal value under that name still is.
TEST(SetOverrideTestSecrets, ASecretReferenceUnderACredentialNameIsNotACredential) {
  Document doc = LoadDoc();
  Diagnostics diags;
  ASSERT_TRUE(ApplySetOverride("spec.stages.train.env.HF_TOKEN={secretKeyRef: {name: hf, key: HF_TOKEN}}", &doc,
                               &diags))
      << Messages(diags);
  EXPECT_EQ(json({{"secretKeyRef", {{"name", "hf"}, {"key", "HF_TOKEN"}}}}),
            doc.root["spec"]["stages"]["train"]["env"]["HF_TOKEN"]);
  Diagnostics refused;
  EXPECT_FALSE(ApplySetOverride("spec.stages.train.env.DB_PASSWORD=hunter2hunter2", &doc, &refused));
  EXPECT_NE(std::string::npos, Messages(refused).find("set.secret")) << Messages(refused);
  Diagnostics token;
  EXPECT_FALSE(ApplySetOverride(
      "spec.stages.train.env.X={secretKeyRef: {name: hf_abcdefghijklmnopqrstuvwxyz0123456789, key: k}}", &doc, &token));
  EXPECT_NE(std::string::npos, Messages(token).find("set.secret")) << Messages(token);
}

}  // namespace
}  // namespace nemoc
