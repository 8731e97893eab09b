#include "jsonnet_expander.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "spec_loader.h"

namespace nemoc {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Messages(const Diagnostics& d) {
  std::string out;
  for (const Diagnostic& x : d.items()) {
    out += std::string(SeverityName(x.severity)) + " [" + x.code + "] " + x.location.file +
           ":" + std::to_string(x.location.line) + ":" + std::to_string(x.location.column) +
           ": " + x.message + "\n";
  }
  return out;
}

// A fresh directory under the system temp directory, removed afterwards.
class JsonnetExpanderTestBase : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    fs::path dir = fs::temp_directory_path() /
                   ("nemoc-jsonnet-test-" + std::to_string(::getpid()) + "-" +
                    std::to_string(counter++));
    fs::remove_all(dir);
    fs::create_directories(dir);
    dir_ = fs::canonical(dir).string();
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Creates dir_/rel (and its parents); returns its canonical path.
  std::string Mkdir(const std::string& rel) {
    fs::create_directories(fs::path(dir_) / rel);
    return fs::canonical(fs::path(dir_) / rel).string();
  }

  // Writes dir_/rel; returns its canonical path.
  std::string Write(const std::string& rel, const std::string& content) {
    fs::path p = fs::path(dir_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return fs::canonical(p).string();
  }

  std::string dir_;
};

// ---------------------------------------------------------------------------
// ResolveImport

class JsonnetExpanderTestResolve : public JsonnetExpanderTestBase {
 protected:
  void SetUp() override {
    JsonnetExpanderTestBase::SetUp();
    root1_ = Mkdir("r1");
    root2_ = Mkdir("r2");
  }
  std::string root1_, root2_;
};

struct Resolved {
  bool ok = false;
  std::string found, content, err;
};

Resolved Resolve(JsonnetExpander* e, const std::string& base, const std::string& rel) {
  Resolved r;
  r.ok = e->ResolveImport(base, rel, &r.found, &r.content, &r.err);
  return r;
}

TEST_F(JsonnetExpanderTestResolve, RejectsAbsolutePaths) {
  const std::string target = Write("r1/a.libsonnet", "1");
  JsonnetExpander e({root1_});
  Resolved r = Resolve(&e, "", target);  // even one inside a root
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.err, "import '" + target +
                       "' is an absolute path; imports are confined to the library roots");
  r = Resolve(&e, root1_ + "/", "/etc/hostname");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.err, "import '/etc/hostname' is an absolute path; imports are confined to the "
                   "library roots");
  EXPECT_TRUE(e.imported().empty());
}

TEST_F(JsonnetExpanderTestResolve, RejectsDotDotSegmentsEvenInsideARoot) {
  Write("r1/a.libsonnet", "1");
  Write("r1/sub/b.libsonnet", "2");
  JsonnetExpander e({root1_});
  for (const std::string rel : {"sub/../a.libsonnet", "../r1/a.libsonnet", "..", "sub/..",
                                "./../a.libsonnet"}) {
    Resolved r = Resolve(&e, root1_ + "/sub/", rel);
    EXPECT_FALSE(r.ok) << rel;
    EXPECT_EQ(r.err, "import '" + rel +
                         "' uses '..'; imports are confined to the library roots (import by "
                         "name from a root instead)")
        << rel;
  }
  // A name that merely starts with two dots is not a '..' segment.
  Write("r1/..odd.libsonnet", "3");
  Resolved r = Resolve(&e, "", "..odd.libsonnet");
  EXPECT_TRUE(r.ok) << r.err;
  EXPECT_EQ(r.content, "3");
}

TEST_F(JsonnetExpanderTestResolve, RejectsBackslashesAndEmptyPaths) {
  Write("r1/sub/b.libsonnet", "2");
  JsonnetExpander e({root1_});
  Resolved r = Resolve(&e, "", "sub\\b.libsonnet");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.err, "import 'sub\\b.libsonnet' contains a backslash");
  r = Resolve(&e, "", "");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.err, "empty import path");
}

TEST_F(JsonnetExpanderTestResolve, RejectsSymlinkPointingOutsideTheRoots) {
  const std::string secret = Write("outside/secret.libsonnet", "'secret'");
  fs::create_symlink(secret, fs::path(root1_) / "link.libsonnet");
  fs::create_directory_symlink(fs::path(dir_) / "outside", fs::path(root1_) / "linkdir");
  JsonnetExpander e({root1_});
  Resolved r = Resolve(&e, "", "link.libsonnet");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.err, "import 'link.libsonnet' resolves to " + secret +
                       ", outside the library roots (a symbolic link?)");
  r = Resolve(&e, root1_ + "/", "linkdir/secret.libsonnet");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.err.find("outside the library roots"), std::string::npos) << r.err;
  EXPECT_TRUE(r.content.empty());
  EXPECT_TRUE(e.imported().empty());
}

TEST_F(JsonnetExpanderTestResolve, SymlinkBetweenRootsIsAllowed) {
  const std::string shared = Write("r2/shared.libsonnet", "'shared'");
  fs::create_symlink(shared, fs::path(root1_) / "alias.libsonnet");
  JsonnetExpander e({root1_, root2_});
  Resolved r = Resolve(&e, "", "alias.libsonnet");
  EXPECT_TRUE(r.ok) << r.err;
  EXPECT_EQ(r.found, shared);
  EXPECT_EQ(r.content, "'shared'");
}

// The one rule for library paths in diagnostics: the root as the caller named
// it (a relative --jpath stays relative, a symlinked one keeps the link's
// name) joined with the path below it; never rewritten for the working
// directory, so a test's expectation holds wherever the clone is.
TEST_F(JsonnetExpanderTestResolve, ShownPathIsTheRootAsNamedWhateverTheWorkingDirectory) {
  Write("r1/lib.libsonnet", "{}");
  fs::create_directory_symlink(root1_, fs::path(dir_) / "via-link");
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  {
    JsonnetExpander e({"via-link/./", root2_});
    EXPECT_EQ(e.ShownPath(root1_ + "/lib.libsonnet"), "via-link/lib.libsonnet");
    EXPECT_EQ(e.ShownPath(root1_ + "/sub/x.libsonnet"), "via-link/sub/x.libsonnet");
    EXPECT_EQ(e.ShownPath(root2_ + "/y.libsonnet"), root2_ + "/y.libsonnet");
    EXPECT_EQ(e.ShownPath("/elsewhere/z.libsonnet"), "/elsewhere/z.libsonnet");
    Resolved r = Resolve(&e, "", "lib.libsonnet");
    ASSERT_TRUE(r.ok) << r.err;
    EXPECT_EQ(e.LibrarySources().count("via-link/lib.libsonnet"), 1u);
    fs::current_path(root2_);  // another working directory shows the same
    EXPECT_EQ(e.ShownPath(root1_ + "/lib.libsonnet"), "via-link/lib.libsonnet");
    EXPECT_EQ(e.ShownPath(root2_ + "/y.libsonnet"), root2_ + "/y.libsonnet");
  }
  fs::current_path(before);
}

TEST_F(JsonnetExpanderTestResolve, NotFoundListsTheRoots) {
  JsonnetExpander e({root1_, root2_, dir_ + "/does-not-exist"});
  Resolved r = Resolve(&e, "", "nope.libsonnet");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.err, "import 'nope.libsonnet' not found in the library roots (" +
                       root1_ + "/" + ", " + root2_ + "/" + ")");
  EXPECT_NE(r.err.find("r1"), std::string::npos);
  EXPECT_NE(r.err.find("r2"), std::string::npos);
  EXPECT_EQ(r.err.find("does-not-exist"), std::string::npos);
  // A directory of that name is not a file.
  Mkdir("r1/dir.libsonnet");
  EXPECT_FALSE(Resolve(&e, "", "dir.libsonnet").ok);
}

TEST_F(JsonnetExpanderTestResolve, ImportingDirectoryFirstThenRootsInOrder) {
  const std::string sub_b = Write("r1/sub/b.libsonnet", "'r1/sub/b'");
  const std::string r1_b = Write("r1/b.libsonnet", "'r1/b'");
  const std::string r2_b = Write("r2/b.libsonnet", "'r2/b'");
  const std::string r2_only = Write("r2/only.libsonnet", "'r2/only'");
  JsonnetExpander e({root1_, root2_});

  Resolved r = Resolve(&e, root1_ + "/sub/", "b.libsonnet");
  ASSERT_TRUE(r.ok) << r.err;
  EXPECT_EQ(r.found, sub_b);
  EXPECT_EQ(r.content, "'r1/sub/b'");

  r = Resolve(&e, "", "b.libsonnet");  // the entry snippet: roots only
  ASSERT_TRUE(r.ok) << r.err;
  EXPECT_EQ(r.found, r1_b);  // first root wins

  r = Resolve(&e, root2_ + "/", "b.libsonnet");  // importing dir (r2) before root r1
  ASSERT_TRUE(r.ok) << r.err;
  EXPECT_EQ(r.found, r2_b);

  r = Resolve(&e, root1_ + "/sub/", "only.libsonnet");  // falls through to the second root
  ASSERT_TRUE(r.ok) << r.err;
  EXPECT_EQ(r.found, r2_only);

  r = Resolve(&e, root1_ + "/", "sub/b.libsonnet");
  ASSERT_TRUE(r.ok) << r.err;
  EXPECT_EQ(r.found, sub_b);
}

TEST_F(JsonnetExpanderTestResolve, ImportingDirectoryOutsideTheRootsIsNotSearched) {
  const std::string outside = Mkdir("outside");
  Write("outside/o.libsonnet", "1");
  JsonnetExpander e({root1_});
  Resolved r = Resolve(&e, outside + "/", "o.libsonnet");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.err.find("not found in the library roots"), std::string::npos) << r.err;
}

TEST_F(JsonnetExpanderTestResolve, RejectsNulBytes) {
  Write("r1/nul.libsonnet", std::string("1\0 2", 4));
  JsonnetExpander e({root1_});
  Resolved r = Resolve(&e, "", "nul.libsonnet");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.err, "import 'nul.libsonnet' contains a NUL byte");
  EXPECT_TRUE(e.imported().empty());
}

TEST_F(JsonnetExpanderTestResolve, RecordsEachImportedFileOnce) {
  const std::string a = Write("r1/a.libsonnet", "'a'");
  const std::string b = Write("r1/sub/b.libsonnet", "'b'");
  JsonnetExpander e({root1_});
  EXPECT_TRUE(Resolve(&e, "", "sub/b.libsonnet").ok);
  EXPECT_TRUE(Resolve(&e, "", "a.libsonnet").ok);
  EXPECT_TRUE(Resolve(&e, "", "a.libsonnet").ok);
  EXPECT_TRUE(Resolve(&e, root1_ + "/sub/", "b.libsonnet").ok);  // same file, other spelling
  EXPECT_TRUE(Resolve(&e, "", "./a.libsonnet").ok);
  EXPECT_FALSE(Resolve(&e, "", "missing.libsonnet").ok);
  ASSERT_EQ(e.imported().size(), 2u);
  EXPECT_EQ(e.imported()[0].path, b);
  EXPECT_EQ(e.imported()[0].content, "'b'");
  EXPECT_EQ(e.imported()[1].path, a);
  EXPECT_EQ(e.imported()[1].content, "'a'");
  SourceTexts sources = e.LibrarySources();
  EXPECT_EQ(sources, (SourceTexts{{a, "'a'"}, {b, "'b'"}}));
}

// BuiltinReplacedBy (the jpath.shadows-builtin warning) states the same
// precedence as the imports nemoc makes: for every file of a --jpath
// directory, the import nemoc uses for it finds that file, and without the
// directory finds exactly the built-in BuiltinReplacedBy names.
TEST_F(JsonnetExpanderTestResolve, BuiltinReplacedByAgreesWithTheImportsNemocMakes) {
  const std::string lib = Mkdir("lib");
  const std::string profiles = Mkdir("profiles");
  const std::string user = Mkdir("user");
  const std::string k8s = Write("lib/k8s.libsonnet", "'k8s'");
  const std::string order = Write("lib/stages/order.libsonnet", "'order'");
  const std::string runtime = Write("lib/runtimes/jobset.libsonnet", "'jobset'");
  const std::string profile = Write("profiles/gke-a4.libsonnet", "'gke'");
  struct Case {
    std::string rel;      // the file in the --jpath directory
    std::string import;   // the import nemoc makes that could find it
    std::string builtin;  // what BuiltinReplacedBy must say
  };
  const std::vector<Case> cases = {
      {"nemoc/k8s.libsonnet", "nemoc/k8s.libsonnet", k8s},
      {"nemoc/stages/order.libsonnet", "nemoc/stages/order.libsonnet", order},
      {"nemoc/profiles/gke-a4.libsonnet", "nemoc/profiles/gke-a4.libsonnet", profile},
      {"runtimes/jobset.libsonnet", "runtimes/jobset.libsonnet", runtime},  // RuntimeImport
      {"gke-a4.libsonnet", "gke-a4.libsonnet", profile},                    // ProfileImport
      // Replace nothing: nemoc's libraries import each other as nemoc/<path>.
      {"k8s.libsonnet", "nemoc/k8s.libsonnet", ""},
      {"stages/order.libsonnet", "nemoc/stages/order.libsonnet", ""},
      {"nemoc/mine.libsonnet", "nemoc/mine.libsonnet", ""},
      {"runtimes/mine.libsonnet", "nemoc/runtimes/mine.libsonnet", ""},
      {"notes.txt", "nemoc/notes.txt", ""},
  };
  for (const auto& c : cases) Write("user/" + c.rel, "'mine'");
  JsonnetExpander with({user, lib, profiles}, 1);
  JsonnetExpander without({lib, profiles}, 0);
  for (const auto& c : cases) {
    EXPECT_EQ(with.BuiltinReplacedBy(c.rel), c.builtin) << c.rel;
    const Resolved mine = Resolve(&with, "", c.import);
    const Resolved builtin = Resolve(&without, "", c.import);
    if (c.builtin.empty()) {
      EXPECT_TRUE(!mine.ok || mine.found != fs::canonical(fs::path(user) / c.rel).string() ||
                  !builtin.ok)
          << c.rel << " would replace " << builtin.found;
    } else {
      ASSERT_TRUE(mine.ok && builtin.ok) << c.rel << ": " << mine.err << builtin.err;
      EXPECT_EQ(mine.found, fs::canonical(fs::path(user) / c.rel).string()) << c.rel;
      EXPECT_EQ(builtin.found, c.builtin) << c.rel;
    }
  }
}

// ---------------------------------------------------------------------------
// Expand

// The entry point of the fake library: each target is built by its profile's
// target(spec, t); the summary records the only_target of the evaluation.
const char kNemocLibsonnet[] = R"(
{
  build(spec, profiles, runtimes, only_target):: {
    targets: {
      [t.name]: profiles[t.profile].target(spec, t) + {
        summary+: { only_target: only_target },
      }
      for t in spec.spec.targets
      if only_target == '' || t.name == only_target
    },
  },
}
)";

const char kGoodProfile[] = R"({
  target(spec, t):: {
    files: {
      ['00-base/configmap-' + t.name + '.yaml']: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: t.name, namespace: spec.spec.namespace },
      },
    },
    diagnostics: [],
    summary: { profile: t.profile },
  },
}
)";

const char kBadProfile[] =
    "{\n"
    "  target(spec, t)::\n"
    "    error 'boom',\n"  // line 3, column 5
    "}\n";

const char kStdErrorProfile[] =
    "{\n"
    "  target(spec, t):: {\n"
    "    files: {},\n"
    "    summary: std.parseInt(t.name),\n"  // line 4, column 14
    "  },\n"
    "}\n";

const char kSyntaxErrorProfile[] =
    "{\n"
    "  target(spec, t):: 1 +,\n"  // ',' at line 2, column 24
    "}\n";

class JsonnetExpanderTestExpand : public JsonnetExpanderTestBase {
 protected:
  void SetUp() override {
    JsonnetExpanderTestBase::SetUp();
    root_ = Mkdir("lib");
    nemoc_ = Write("lib/nemoc.libsonnet", kNemocLibsonnet);
    good_ = Write("lib/good.libsonnet", kGoodProfile);
    bad_ = Write("lib/bad.libsonnet", kBadProfile);
  }

  // A spec with one target per (name, profile).
  Document Spec(const std::vector<std::pair<std::string, std::string>>& targets) {
    std::string text =
        "metadata: {name: demo}\n"
        "spec:\n"
        "  namespace: ml\n"
        "  targets:\n";
    for (const auto& [name, profile] : targets) {
      text += "    - name: " + name + "\n      profile: " + json(profile).dump() + "\n";
    }
    Document doc;
    Diagnostics diags;
    EXPECT_TRUE(LoadSpecText("spec.yaml", text, &doc, &diags)) << Messages(diags);
    return doc;
  }

  struct Result {
    bool ok = false;
    std::map<std::string, TargetExpansion> out;
    Diagnostics diags;
  };

  Result Run(JsonnetExpander* e, const Document& doc) {
    Result r;
    r.ok = e->Expand(doc.root, doc, &r.out, &r.diags);
    return r;
  }

  std::string root_, nemoc_, good_, bad_;
};

TEST_F(JsonnetExpanderTestExpand, OneEvaluationReturnsFilesPerTarget) {
  JsonnetExpander e({root_});
  Document doc = Spec({{"alpha", "good"}, {"beta", "good"}});
  Result r = Run(&e, doc);
  ASSERT_TRUE(r.ok) << Messages(r.diags);
  EXPECT_TRUE(r.diags.empty()) << Messages(r.diags);
  ASSERT_EQ(r.out.size(), 2u);
  for (const std::string name : {"alpha", "beta"}) {
    const TargetExpansion& t = r.out[name];
    ASSERT_EQ(t.files.size(), 1u) << name;
    EXPECT_EQ(t.files.begin()->first, "00-base/configmap-" + name + ".yaml");
    EXPECT_EQ(t.files.begin()->second,
              json({{"apiVersion", "v1"},
                    {"kind", "ConfigMap"},
                    {"metadata", {{"name", name}, {"namespace", "ml"}}}}));
    // Both targets came from the evaluation with only_target == ''.
    EXPECT_EQ(t.summary, json({{"profile", "good"}, {"only_target", ""}})) << name;
  }
  ASSERT_EQ(e.imported().size(), 2u);
  EXPECT_EQ(e.imported()[0].path, nemoc_);
  EXPECT_EQ(e.imported()[0].content, kNemocLibsonnet);
  EXPECT_EQ(e.imported()[1].path, good_);
  const SourceTexts sources = e.LibrarySources();
  EXPECT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources.at(good_), kGoodProfile);

  // A second Expand starts the import record afresh.
  Result again = Run(&e, doc);
  ASSERT_TRUE(again.ok) << Messages(again.diags);
  EXPECT_EQ(e.imported().size(), 2u);
}

TEST_F(JsonnetExpanderTestExpand, RuntimeErrorIsLocatedInTheLibrary) {
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "bad"}}));
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.items().size(), 1u) << Messages(r.diags);
  const Diagnostic& d = r.diags.items()[0];
  EXPECT_EQ(d.severity, Severity::kError);
  EXPECT_EQ(d.code, "library.error");
  EXPECT_EQ(d.message, "target alpha: boom");
  EXPECT_EQ(d.location.file, bad_);
  EXPECT_EQ(d.location.line, 3);
  EXPECT_EQ(d.location.column, 5);
  EXPECT_EQ(d.hint, "raised while expanding the Jsonnet libraries");
  // The library text is available to quote the line.
  EXPECT_EQ(e.LibrarySources().count(bad_), 1u);
}

TEST_F(JsonnetExpanderTestExpand, StdlibFramesAreSkippedForTheFirstLibraryFrame) {
  Write("lib/stderr.libsonnet", kStdErrorProfile);
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "stderr"}}));
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.items().size(), 1u) << Messages(r.diags);
  const Diagnostic& d = r.diags.items()[0];
  EXPECT_EQ(d.message, "target alpha: alpha is not a base 10 integer");
  EXPECT_EQ(d.location.file, root_ + "/stderr.libsonnet");
  EXPECT_EQ(d.location.line, 4);
  EXPECT_EQ(d.location.column, 14);
}

TEST_F(JsonnetExpanderTestExpand, OnlyTheFailingTargetIsNamed) {
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "good"}, {"beta", "bad"}}));
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.items().size(), 1u) << Messages(r.diags);
  const Diagnostic& d = r.diags.items()[0];
  EXPECT_EQ(d.message, "target beta: boom");
  EXPECT_EQ(d.location.file, bad_);
  EXPECT_EQ(d.location.line, 3);
  EXPECT_EQ(d.location.column, 5);
}

TEST_F(JsonnetExpanderTestExpand, EveryFailingTargetIsNamed) {
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "bad"}, {"beta", "bad"}}));
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.items().size(), 2u) << Messages(r.diags);
  EXPECT_EQ(r.diags.items()[0].message, "target alpha: boom");
  EXPECT_EQ(r.diags.items()[1].message, "target beta: boom");
}

TEST_F(JsonnetExpanderTestExpand, StaticErrorInALibraryIsLocated) {
  const std::string syntax = Write("lib/syntax.libsonnet", kSyntaxErrorProfile);
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "good"}, {"beta", "syntax"}}));
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.items().size(), 1u) << Messages(r.diags);
  const Diagnostic& d = r.diags.items()[0];
  EXPECT_EQ(d.code, "library.error");
  EXPECT_EQ(d.message, "target beta: unexpected: \",\" while parsing terminal");
  EXPECT_EQ(d.location.file, syntax);
  EXPECT_EQ(d.location.line, 2);
  EXPECT_EQ(d.location.column, 24);
}

TEST_F(JsonnetExpanderTestExpand, StaticErrorInTheEntryLibrary) {
  Write("lib/nemoc.libsonnet", "{\n  build(spec, profiles, runtimes, only_target):: [\n}\n");
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "good"}}));
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.items().size(), 1u) << Messages(r.diags);
  const Diagnostic& d = r.diags.items()[0];
  EXPECT_EQ(d.location.file, nemoc_);
  EXPECT_EQ(d.location.line, 3);
  EXPECT_EQ(d.location.column, 1);
  EXPECT_EQ(d.message.rfind("target alpha: unexpected: \"}\"", 0), 0u) << d.message;
}

TEST_F(JsonnetExpanderTestExpand, ImportsOutsideTheRootsFailInsideJsonnet) {
  Write("lib/nemoc.libsonnet",
        "local x = import '/etc/hostname';\n"
        "{ build(spec, profiles, runtimes, only_target):: x }\n");
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "good"}}));
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.items().size(), 1u) << Messages(r.diags);
  const Diagnostic& d = r.diags.items()[0];
  EXPECT_NE(d.message.find("import '/etc/hostname' is an absolute path"), std::string::npos)
      << d.message;
  EXPECT_EQ(d.location.file, nemoc_);
  EXPECT_EQ(d.location.line, 1);
}

TEST_F(JsonnetExpanderTestExpand, LibrariesImportRelativeToThemselvesFirst) {
  Write("lib/nemoc.libsonnet",
        "local util = import 'sub/util.libsonnet';\n"
        "{ build(spec, profiles, runtimes, only_target):: { targets: { [t.name]: {\n"
        "    files: {}, summary: { which: util.which } } for t in spec.spec.targets } } }\n");
  const std::string util = Write("lib/sub/util.libsonnet", "import 'helper.libsonnet'\n");
  const std::string sub_helper = Write("lib/sub/helper.libsonnet", "{ which: 'sub' }\n");
  Write("lib/helper.libsonnet", "{ which: 'root' }\n");
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "good"}}));
  ASSERT_TRUE(r.ok) << Messages(r.diags);
  EXPECT_EQ(r.out["alpha"].summary, json({{"which", "sub"}}));
  std::vector<std::string> paths;
  for (const auto& f : e.imported()) paths.push_back(f.path);
  // Every file the entry reaches, depth first in source order; the profile
  // counts although this nemoc.libsonnet never uses it (the libraries are
  // evaluated as one bundled program, see Bundle()).
  EXPECT_TRUE(e.bundled());
  EXPECT_EQ(paths, (std::vector<std::string>{nemoc_, util, sub_helper, good_}));
}

// importstr is bundled too: one importstr (e.g. serve.libsonnet's Triton
// Python models) used to make libjsonnet import every file itself, re-parsing
// its standard library per file (one A4 target: 297 ms -> 980 ms).
TEST_F(JsonnetExpanderTestExpand, ImportstrIsBundledAsTheFilesText) {
  Write("lib/nemoc.libsonnet",
        "local text = importstr 'sub/model.py';\n"
        "local again = importstr 'sub/model.py';\n"
        "{ build(spec, profiles, runtimes, only_target):: { targets: { [t.name]: {\n"
        "    files: {}, summary: { text: text, same: text == again } } for t in spec.spec.targets } } }\n");
  const std::string model = Write("lib/sub/model.py", "print(\"caf\u00e9\\n\")\n\ttab 'q' \\ end\n");
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "good"}}));
  ASSERT_TRUE(r.ok) << Messages(r.diags);
  EXPECT_TRUE(e.bundled());
  EXPECT_EQ(r.out["alpha"].summary,
            json({{"text", "print(\"caf\u00e9\\n\")\n\ttab 'q' \\ end\n"}, {"same", true}}));
  std::vector<std::string> paths;
  for (const auto& f : e.imported()) paths.push_back(f.path);
  EXPECT_NE(std::find(paths.begin(), paths.end(), model), paths.end()) << "importstr file not recorded";
}

// The bundle writes an importstr text as a verbatim string @'...' (no
// escaping, nothing for libjsonnet to unescape): quotes at either end and
// doubled, backslashes and invalid UTF-8 come out as libjsonnet's own
// importstr gives them (an invalid byte is U+FFFD: google/jsonnet v0.18.0
// core/unicode.h:21 and core/vm.cpp:2070). A NUL byte, where the verbatim
// lexer would stop, is refused in any import, bundled or not.
TEST_F(JsonnetExpanderTestExpand, ImportstrTextsKeepEveryByteAsLibjsonnetReadsThem) {
  Write("lib/nemoc.libsonnet",
        "local quotes = importstr 'sub/quotes.txt';\n"
        "{ build(spec, profiles, runtimes, only_target):: { targets: { [t.name]: {\n"
        "    files: {}, summary: { quotes: quotes } } for t in spec.spec.targets } } }\n");
  Write("lib/sub/quotes.txt", std::string("'a'' \"b\" \\' @'c'\n\xff" "d'"));
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "good"}}));
  ASSERT_TRUE(r.ok) << Messages(r.diags);
  EXPECT_TRUE(e.bundled());
  EXPECT_EQ(r.out["alpha"].summary, json({{"quotes", "'a'' \"b\" \\' @'c'\n\xef\xbf\xbd" "d'"}}));

  Write("lib/sub/quotes.txt", std::string("x\0y'", 4));
  JsonnetExpander again({root_});
  r = Run(&again, Spec({{"alpha", "good"}}));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(Messages(r.diags).find("import 'sub/quotes.txt' contains a NUL byte"), std::string::npos)
      << Messages(r.diags);
}

// The shipped library and every shipped profile are one bundled program: a
// construct the bundler cannot take (importbin, an import path it cannot
// scan) silently costs every build the per-file std parse.
TEST(JsonnetExpanderShippedTest, EveryShippedProfileIsBundled) {
  JsonnetExpander e({NEMOC_SOURCE_DIR "/libsonnet", NEMOC_SOURCE_DIR "/profiles"});
  int profiles = 0;
  for (const auto& f : fs::directory_iterator(NEMOC_SOURCE_DIR "/profiles")) {
    if (f.path().extension() != ".libsonnet") continue;
    const std::string name = f.path().stem().string();
    const json normalized = {{"spec", {{"targets", json::array({{{"name", "t"}, {"profile", name}}})}}}};
    EXPECT_TRUE(e.RecordImports(normalized)) << name;
    ++profiles;
  }
  EXPECT_GE(profiles, 3);
}

TEST_F(JsonnetExpanderTestExpand, AnImportThatIsNeverUsedMayBeMissing) {
  // As with libjsonnet's own lazy imports, a missing file only matters when
  // the value is used.
  Write("lib/nemoc.libsonnet",
        "local unused = import 'no-such.libsonnet';\n"
        "{ build(spec, profiles, runtimes, only_target):: { targets: { [t.name]: {\n"
        "    files: {}, summary: {} } for t in spec.spec.targets } } }\n");
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "good"}}));
  ASSERT_TRUE(r.ok) << Messages(r.diags);
  EXPECT_TRUE(e.bundled());
}

TEST_F(JsonnetExpanderTestExpand, FirstRootWins) {
  const std::string user = Mkdir("user");
  const std::string user_good =
      Write("user/good.libsonnet",
            "{ target(spec, t):: { files: {}, summary: { from: 'user' } } }\n");
  JsonnetExpander e({user, root_}, 1);  // user: a --jpath root
  Result r = Run(&e, Spec({{"alpha", "good"}}));
  ASSERT_TRUE(r.ok) << Messages(r.diags);
  EXPECT_EQ(r.out["alpha"].summary, json({{"from", "user"}, {"only_target", ""}}));
  ASSERT_EQ(e.imported().size(), 2u);
  EXPECT_EQ(e.imported()[1].path, user_good);
}

TEST_F(JsonnetExpanderTestExpand, ProfileDiagnosticsAreLocatedInTheSpec) {
  Write("lib/diag.libsonnet", R"({
  target(spec, t):: {
    files: {},
    summary: {},
    diagnostics: [
      { pointer: '/spec/targets/0/name', severity: 'warning', code: 'profile.long-name',
        message: 'name is long', hint: 'shorten it' },
      { pointer: '/spec/targets/0/profile', atKey: true, message: 'needs rdma' },
      { pointer: '/spec/targets/0/rdma/count', severity: 'error', code: 'profile.rdma',
        message: 'set rdma.count' },
    ],
  },
}
)");
  // spec.yaml:
  //   5:     - name: alpha        value at column 13, the item at column 7
  //   6:       profile: "diag"    key at column 7
  Document doc = Spec({{"alpha", "diag"}});
  JsonnetExpander e({root_});
  Result r = Run(&e, doc);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.items().size(), 3u) << Messages(r.diags);

  const Diagnostic& w = r.diags.items()[0];
  EXPECT_EQ(w.severity, Severity::kWarning);
  EXPECT_EQ(w.code, "profile.long-name");
  EXPECT_EQ(w.message, "target alpha: name is long");
  EXPECT_EQ(w.hint, "shorten it");
  EXPECT_EQ(w.location.file, "spec.yaml");
  EXPECT_EQ(w.location.line, 5);
  EXPECT_EQ(w.location.column, 13);

  const Diagnostic& k = r.diags.items()[1];
  EXPECT_EQ(k.severity, Severity::kError);
  EXPECT_EQ(k.code, "profile.error");
  EXPECT_EQ(k.message, "target alpha: needs rdma");
  EXPECT_EQ(k.hint, "");
  EXPECT_EQ(k.location.file, "spec.yaml");
  EXPECT_EQ(k.location.line, 6);
  EXPECT_EQ(k.location.column, 7);

  const Diagnostic& a = r.diags.items()[2];
  EXPECT_EQ(a.severity, Severity::kError);
  EXPECT_EQ(a.code, "profile.rdma");
  EXPECT_EQ(a.location.file, "spec.yaml");
  EXPECT_EQ(a.location.line, 5);  // nearest recorded ancestor: the target item
  EXPECT_EQ(a.location.column, 7);

  // The target's output is still returned.
  EXPECT_EQ(r.out.count("alpha"), 1u);
}

TEST_F(JsonnetExpanderTestExpand, WarningsAloneSucceed) {
  Write("lib/warn.libsonnet", R"({
  target(spec, t):: {
    files: {},
    diagnostics: [{ pointer: '/spec/namespace', severity: 'warning', message: 'hm' }],
  },
}
)");
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "warn"}}));
  EXPECT_TRUE(r.ok) << Messages(r.diags);
  ASSERT_EQ(r.diags.items().size(), 1u);
  EXPECT_EQ(r.diags.items()[0].severity, Severity::kWarning);
  EXPECT_EQ(r.diags.items()[0].code, "profile.warning");
  EXPECT_EQ(r.diags.items()[0].location.line, 3);  // "  namespace: ml"
  EXPECT_EQ(r.diags.items()[0].location.column, 14);
  EXPECT_EQ(r.diags.error_count(), 0u);
}

TEST_F(JsonnetExpanderTestExpand, OutputWithoutTargetsIsRefused) {
  Write("lib/nemoc.libsonnet", "{ build(spec, profiles, runtimes, only_target):: { files: {} } }\n");
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "good"}}));
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.items().size(), 1u) << Messages(r.diags);
  EXPECT_EQ(r.diags.items()[0].code, "library.output");
  EXPECT_EQ(r.diags.items()[0].message, "nemoc.libsonnet must return {targets: {...}}");
}

// ---------------------------------------------------------------------------
// ExpandBatch: several specs in one evaluation

TEST_F(JsonnetExpanderTestExpand, BatchGivesEachSpecWhatExpandGivesIt) {
  Write("lib/warn.libsonnet", R"({
  target(spec, t):: {
    files: {},
    diagnostics: [{ pointer: '/spec/namespace', severity: 'warning', message: 'hm ' + t.name }],
  },
}
)");
  Document a = Spec({{"alpha", "good"}, {"beta", "good"}});
  Document b = Spec({{"gamma", "warn"}, {"delta", "good"}});
  JsonnetExpander single({root_});
  Result ra = Run(&single, a);
  const std::vector<ImportedFile> imports_a = single.imported();
  Result rb = Run(&single, b);
  const std::vector<ImportedFile> imports_b = single.imported();
  ASSERT_TRUE(ra.ok && rb.ok) << Messages(ra.diags) << Messages(rb.diags);

  JsonnetExpander batched({root_});
  std::vector<std::map<std::string, TargetExpansion>> outs;
  std::vector<Diagnostics> diags;
  std::vector<bool> ok;
  ASSERT_TRUE(batched.ExpandBatch({{&a.root, &a}, {&b.root, &b}}, &outs, &diags, &ok));
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(ok, std::vector<bool>({true, true}));
  const Result* singles[] = {&ra, &rb};
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(outs[i].size(), singles[i]->out.size()) << i;
    for (const auto& [name, expansion] : singles[i]->out) {
      ASSERT_EQ(outs[i].count(name), 1u) << name;
      EXPECT_EQ(outs[i][name].files, expansion.files) << name;
      EXPECT_EQ(outs[i][name].summary, expansion.summary) << name;
    }
    EXPECT_EQ(Messages(diags[i]), Messages(singles[i]->diags)) << i;
  }
  EXPECT_EQ(Messages(diags[1]), "warning [profile.warning] spec.yaml:3:14: target gamma: hm gamma\n");
  // What each spec alone imports, for its stamp.
  auto paths = [](const std::vector<ImportedFile>& files) {
    std::vector<std::string> p;
    for (const auto& f : files) p.push_back(f.path);
    return p;
  };
  ASSERT_TRUE(batched.RecordImports(a.root));
  EXPECT_EQ(paths(batched.imported()), paths(imports_a));
  ASSERT_TRUE(batched.RecordImports(b.root));
  EXPECT_EQ(paths(batched.imported()), paths(imports_b));
  EXPECT_NE(paths(imports_a), paths(imports_b));  // warn.libsonnet is b's alone
}

TEST_F(JsonnetExpanderTestExpand, BatchWithAFailingSpecFailsAndTheVmStillExpandsOneSpec) {
  Document a = Spec({{"alpha", "good"}});
  Document b = Spec({{"beta", "bad"}});
  JsonnetExpander e({root_});
  std::vector<std::map<std::string, TargetExpansion>> outs;
  std::vector<Diagnostics> diags;
  std::vector<bool> ok;
  EXPECT_FALSE(e.ExpandBatch({{&a.root, &a}, {&b.root, &b}}, &outs, &diags, &ok));
  // libjsonnet keeps top-level arguments between evaluations: the batch's
  // must not leak into the next single evaluation, nor a single one's into
  // the next batch.
  Result r = Run(&e, b);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.items().size(), 1u) << Messages(r.diags);
  EXPECT_EQ(r.diags.items()[0].message, "target beta: boom");
  Result good = Run(&e, a);
  EXPECT_TRUE(good.ok) << Messages(good.diags);
  EXPECT_EQ(good.out.count("alpha"), 1u);
  ASSERT_TRUE(e.ExpandBatch({{&a.root, &a}, {&a.root, &a}}, &outs, &diags, &ok));
  EXPECT_EQ(outs[1].at("alpha").files, good.out.at("alpha").files);
}


TEST_F(JsonnetExpanderTestExpand, MalformedProfileDiagnosticsAreReportedNotThrown) {
  Write("lib/sloppy.libsonnet", R"({
  target(spec, t):: { files: {}, diagnostics: ['oops', { message: 'm', severity: 1 }] },
}
)");
  JsonnetExpander e({root_});
  Document doc = Spec({{"alpha", "sloppy"}});
  std::map<std::string, TargetExpansion> out;
  Diagnostics diags;
  bool ok = true;
  EXPECT_NO_THROW(ok = e.Expand(doc.root, doc, &out, &diags));
  EXPECT_FALSE(ok);
  ASSERT_EQ(diags.items().size(), 2u) << Messages(diags);
  EXPECT_EQ(diags.items()[0].code, "library.output");
  EXPECT_EQ(diags.items()[0].message, "target alpha: malformed profile diagnostic \"oops\"");
  // A severity that is not a string counts as an error.
  EXPECT_EQ(diags.items()[1].severity, Severity::kError);
  EXPECT_EQ(diags.items()[1].code, "profile.error");
  EXPECT_EQ(diags.items()[1].message, "target alpha: m");
}

TEST_F(JsonnetExpanderTestExpand, UnsafeProfileNameIsRefusedWithoutEvaluating) {
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "x'; error 'y"}}));
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.items().size(), 1u) << Messages(r.diags);
  EXPECT_EQ(r.diags.items()[0].code, "library.profile");
  EXPECT_EQ(r.diags.items()[0].message, "target alpha: invalid profile name 'x'; error 'y'");
  EXPECT_FALSE(r.diags.items()[0].location.known());
  EXPECT_TRUE(e.imported().empty()) << "nothing may be evaluated";
  EXPECT_TRUE(r.out.empty());

  for (const std::string& profile :
       std::vector<std::string>{"Upper", "a/b", "../bad", "1abc", std::string(64, 'a')}) {
    JsonnetExpander other({root_});
    Result refused = Run(&other, Spec({{"alpha", profile}}));
    EXPECT_FALSE(refused.ok) << profile;
    EXPECT_TRUE(other.imported().empty()) << profile;
    ASSERT_EQ(refused.diags.items().size(), 1u) << profile << "\n" << Messages(refused.diags);
    EXPECT_EQ(refused.diags.items()[0].message,
              "target alpha: invalid profile name '" + profile + "'");
  }
}

TEST_F(JsonnetExpanderTestExpand, UnsafeProfileNameBlamesOnlyItsTarget) {
  JsonnetExpander e({root_});
  Result r = Run(&e, Spec({{"alpha", "good"}, {"beta", "x'; error 'y"}}));
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.items().size(), 1u) << Messages(r.diags);
  EXPECT_EQ(r.diags.items()[0].message, "target beta: invalid profile name 'x'; error 'y'");
}


}  // namespace
}  // namespace nemoc

namespace nemoc {
namespace {

// The workload kinds `nemoc diff` flags: gitops.libsonnet's core kinds and
// each runtime's, a --jpath runtime's included.
TEST(JsonnetExpanderTestWorkloadKinds, CoreKindsAndEveryRuntimesKind) {
  Diagnostics diags;
  std::vector<std::string> kinds;
  JsonnetExpander builtin({NEMOC_SOURCE_DIR "/libsonnet", NEMOC_SOURCE_DIR "/profiles"});
  ASSERT_TRUE(builtin.WorkloadKinds(&kinds, &diags));
  EXPECT_EQ(kinds, (std::vector<std::string>{"batch/Job", "jobset.x-k8s.io/JobSet", "kubeflow.org/MPIJob",
                                             "kubeflow.org/PyTorchJob", "trainer.kubeflow.org/TrainJob"}));
  const std::string dir = ::testing::TempDir() + "/workload-kinds-jpath";
  std::filesystem::create_directories(dir + "/runtimes");
  std::ofstream(dir + "/runtimes/my-mpi.libsonnet")
      << "(import 'runtime.libsonnet') + { name: 'my-mpi', describe:: 'x', objects(ctx, w):: [],"
         " workload:: { kind: 'example.com/Ranks', health: null } }\n";
  JsonnetExpander with_jpath({dir, NEMOC_SOURCE_DIR "/libsonnet", NEMOC_SOURCE_DIR "/profiles"}, 1);
  kinds.clear();
  ASSERT_TRUE(with_jpath.WorkloadKinds(&kinds, &diags));
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "example.com/Ranks"), kinds.end());
  EXPECT_TRUE(diags.items().empty());
}

}  // namespace
}  // namespace nemoc
