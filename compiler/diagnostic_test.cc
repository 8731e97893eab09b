#include "diagnostic.h"

#include <string>

#include <gtest/gtest.h>

#include "source_map.h"

namespace nemoc {
namespace {

using nlohmann::json;

Diagnostic Make(Severity severity, std::string message, Location loc,
                std::string hint = {}, std::string code = "test.code") {
  Diagnostic d;
  d.severity = severity;
  d.code = std::move(code);
  d.message = std::move(message);
  d.location = std::move(loc);
  d.hint = std::move(hint);
  return d;
}

// ---------------------------------------------------------------------------
// RenderText

// E20: diagnostics are capped per field, with a count of the rest.
TEST(DiagnosticCap, ListItemsAndUnknownFieldsAreCappedPerFieldWithACount) {
  Diagnostics ds;
  for (int i = 0; i < 25; ++i) {
    ds.Error("spec.enum", "item " + std::to_string(i),
             {"s.yaml", 3, 5 + i, "/spec/stages/train/peft/targetModules/" + std::to_string(i)});
    ds.Error("spec.unknown-field", "key " + std::to_string(i), {"s.yaml", 4 + i, 7, "/spec/stages/train/k" + std::to_string(i)});
  }
  ds.Error("spec.enum", "another field", {"s.yaml", 9, 1, "/spec/stages/train/precision"});
  ds.Error("output.io", "no pointer: never grouped");
  ds.Error("output.io", "no pointer: never grouped");
  const Diagnostics capped = CappedPerField(ds, 10);
  std::vector<std::string> notes;
  size_t errors = 0;
  for (const auto& d : capped.items()) {
    if (d.severity == Severity::kNote) notes.push_back(d.message);
    if (d.severity == Severity::kError) ++errors;
  }
  EXPECT_EQ(errors, 10u + 10u + 1u + 2u);
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "15 more errors like the 10 above at spec.stages.train.peft.targetModules[*] not shown",
                       "15 more errors like the 10 above at spec.stages.train not shown"}));
  // Under the limit nothing changes.
  EXPECT_EQ(CappedPerField(ds, 100).items().size(), ds.items().size());
}

TEST(DiagnosticTestRender, ErrorWithLineCaretAndHint) {
  const SourceTexts sources = {{"spec.yaml", "a: 1\nbb: oops\nc: 3\n"}};
  Diagnostic d = Make(Severity::kError, "bad value", {"spec.yaml", 2, 5}, "use a number");
  EXPECT_EQ(RenderText(d, sources),
            "spec.yaml:2:5: error: bad value\n"
            "  bb: oops\n"
            "      ^\n"
            "  hint: use a number\n");
}

TEST(DiagnosticTestRender, CaretAtColumnOne) {
  const SourceTexts sources = {{"f.yaml", "key: v\n"}};
  EXPECT_EQ(RenderText(Make(Severity::kError, "m", {"f.yaml", 1, 1}), sources),
            "f.yaml:1:1: error: m\n"
            "  key: v\n"
            "  ^\n");
}

TEST(DiagnosticTestRender, CaretKeepsTabsOfTheQuotedLine) {
  // The caret must line up with the column in a terminal whatever the tab
  // width: tabs before the column are copied, other characters become spaces.
  const SourceTexts sources = {{"f.yaml", "x: 1\n\t\tkey: value\n"}};
  EXPECT_EQ(RenderText(Make(Severity::kError, "tab", {"f.yaml", 2, 4}), sources),
            "f.yaml:2:4: error: tab\n"
            "  \t\tkey: value\n"
            "  \t\t ^\n");
}

TEST(DiagnosticTestRender, CaretPastTheEndOfTheLineStopsAfterIt) {
  const SourceTexts sources = {{"f.yaml", "ab\n"}};
  EXPECT_EQ(RenderText(Make(Severity::kError, "m", {"f.yaml", 1, 10}), sources),
            "f.yaml:1:10: error: m\n"
            "  ab\n"
            "    ^\n");
}

TEST(DiagnosticTestRender, CarriageReturnIsNotQuoted) {
  const SourceTexts sources = {{"f.yaml", "a: 1\r\nb: 2\r\n"}};
  EXPECT_EQ(RenderText(Make(Severity::kError, "m", {"f.yaml", 2, 4}), sources),
            "f.yaml:2:4: error: m\n"
            "  b: 2\n"
            "     ^\n");
}

TEST(DiagnosticTestRender, LastLineWithoutNewline) {
  const SourceTexts sources = {{"f.yaml", "a: 1\nb: 2"}};
  EXPECT_EQ(RenderText(Make(Severity::kError, "m", {"f.yaml", 2, 1}), sources),
            "f.yaml:2:1: error: m\n"
            "  b: 2\n"
            "  ^\n");
}

TEST(DiagnosticTestRender, LongLinesAreCutAt120Characters) {
  const std::string line(130, 'x');
  const SourceTexts sources = {{"f.yaml", line + "\n"}};
  EXPECT_EQ(RenderText(Make(Severity::kError, "m", {"f.yaml", 1, 3}), sources),
            "f.yaml:1:3: error: m\n"
            "  " + std::string(120, 'x') + "...\n"
            "    ^\n");
}

TEST(DiagnosticTestRender, UnknownLocationWithoutFile) {
  EXPECT_EQ(RenderText(Make(Severity::kError, "no spec given", {}), {}),
            "nemoc: error: no spec given\n");
  EXPECT_EQ(RenderText(Make(Severity::kError, "no spec given", {}, "pass a file"), {}),
            "nemoc: error: no spec given\n"
            "  hint: pass a file\n");
}

TEST(DiagnosticTestRender, FileWithoutLineIsNamedButNotQuoted) {
  const SourceTexts sources = {{"spec.yaml", "a: 1\n"}};
  EXPECT_EQ(RenderText(Make(Severity::kError, "too large", {"spec.yaml", 0, 0}), sources),
            "spec.yaml: error: too large\n");
}

TEST(DiagnosticTestRender, Warning) {
  const SourceTexts sources = {{"f.yaml", "enabled: yes\n"}};
  EXPECT_EQ(RenderText(Make(Severity::kWarning, "YAML 1.1 boolean", {"f.yaml", 1, 10},
                            "write true"),
                       sources),
            "f.yaml:1:10: warning: YAML 1.1 boolean\n"
            "  enabled: yes\n"
            "           ^\n"
            "  hint: write true\n");
}

TEST(DiagnosticTestRender, Note) {
  EXPECT_EQ(RenderText(Make(Severity::kNote, "and 3 more", {"f.yaml", 0, 0}), {}),
            "f.yaml: note: and 3 more\n");
}

TEST(DiagnosticTestRender, LineBeyondTheFileShowsOnlyTheHeader) {
  const SourceTexts sources = {{"f.yaml", "a: 1\nb: 2\n"}};
  EXPECT_EQ(RenderText(Make(Severity::kError, "m", {"f.yaml", 9, 2}, "h"), sources),
            "f.yaml:9:2: error: m\n"
            "  hint: h\n");
  // Line 3 is the empty remainder after the final newline.
  EXPECT_EQ(RenderText(Make(Severity::kError, "m", {"f.yaml", 3, 1}), sources),
            "f.yaml:3:1: error: m\n");
}

TEST(DiagnosticTestRender, SourceNotAvailableShowsOnlyTheHeader) {
  const SourceTexts sources = {{"other.yaml", "a: 1\n"}};
  EXPECT_EQ(RenderText(Make(Severity::kError, "m", {"f.yaml", 1, 1}), sources),
            "f.yaml:1:1: error: m\n");
}

TEST(DiagnosticTestRender, Color) {
  const SourceTexts sources = {{"f.yaml", "a: 1\n"}};
  EXPECT_EQ(RenderText(Make(Severity::kError, "m", {"f.yaml", 1, 4}), sources, true),
            "\033[1mf.yaml:1:4: \033[0m\033[1;31merror:\033[0m \033[1mm\033[0m\n"
            "  a: 1\n"
            "     \033[1;32m^\033[0m\n");
  EXPECT_EQ(RenderText(Make(Severity::kWarning, "w", {}), {}, true),
            "\033[1mnemoc: \033[0m\033[1;35mwarning:\033[0m \033[1mw\033[0m\n");
}

TEST(DiagnosticTestRender, AllDiagnosticsInOrder) {
  Diagnostics ds;
  ds.Error("a", "first", {"f.yaml", 2, 1});
  ds.Warning("b", "second", {"f.yaml", 1, 1});
  const SourceTexts sources = {{"f.yaml", "x\ny\n"}};
  EXPECT_EQ(RenderText(ds, sources),
            "f.yaml:2:1: error: first\n"
            "  y\n"
            "  ^\n"
            "f.yaml:1:1: warning: second\n"
            "  x\n"
            "  ^\n");
  EXPECT_EQ(RenderText(Diagnostics(), sources), "");
}

// ---------------------------------------------------------------------------
// ToJson, SeverityName

TEST(DiagnosticTestJson, AllFields) {
  Diagnostic d = Make(Severity::kWarning, "msg", {"f.yaml", 3, 7}, "hint text", "yaml.x");
  EXPECT_EQ(ToJson(d), json::parse(R"({"severity": "warning", "code": "yaml.x",
      "message": "msg", "file": "f.yaml", "line": 3, "column": 7, "hint": "hint text"})"));
}

TEST(DiagnosticTestJson, OptionalFieldsAreOmitted) {
  EXPECT_EQ(ToJson(Make(Severity::kError, "msg", {}, {}, "c")),
            json::parse(R"({"severity": "error", "code": "c", "message": "msg"})"));
  EXPECT_EQ(ToJson(Make(Severity::kNote, "msg", {"f.yaml", 0, 0}, {}, "c")),
            json::parse(R"({"severity": "note", "code": "c", "message": "msg",
                            "file": "f.yaml"})"));
}

TEST(DiagnosticTestJson, SeverityNames) {
  EXPECT_STREQ(SeverityName(Severity::kError), "error");
  EXPECT_STREQ(SeverityName(Severity::kWarning), "warning");
  EXPECT_STREQ(SeverityName(Severity::kNote), "note");
}

// ---------------------------------------------------------------------------
// Diagnostics

TEST(DiagnosticTestCollection, CountsErrorsNotWarningsOrNotes) {
  Diagnostics ds;
  EXPECT_TRUE(ds.empty());
  EXPECT_FALSE(ds.has_errors());
  ds.Warning("w", "warn");
  ds.Add(Make(Severity::kNote, "note", {}));
  EXPECT_FALSE(ds.empty());
  EXPECT_FALSE(ds.has_errors());
  EXPECT_EQ(ds.error_count(), 0u);
  Diagnostic& e = ds.Error("e", "err", {"f", 1, 2}, "h");
  EXPECT_EQ(e.code, "e");
  EXPECT_EQ(e.hint, "h");
  EXPECT_EQ(e.location.column, 2);
  EXPECT_TRUE(ds.has_errors());
  EXPECT_EQ(ds.error_count(), 1u);
  EXPECT_EQ(ds.items().size(), 3u);

  Diagnostics more;
  more.Error("e2", "err2");
  more.Error("e3", "err3");
  ds.Append(more);
  EXPECT_EQ(ds.error_count(), 3u);
  ASSERT_EQ(ds.items().size(), 5u);
  EXPECT_EQ(ds.items()[3].code, "e2");
  EXPECT_EQ(ds.items()[4].code, "e3");
}

TEST(DiagnosticTestCollection, SortByLocationIsStable) {
  Diagnostics ds;
  ds.Error("1", "b-5-1", {"b.yaml", 5, 1});
  ds.Error("2", "a-2-9", {"a.yaml", 2, 9});
  ds.Error("3", "a-2-3 first", {"a.yaml", 2, 3});
  ds.Warning("4", "a-2-3 second", {"a.yaml", 2, 3});
  ds.Error("5", "a-unknown", {"a.yaml", 0, 0});
  ds.Error("6", "no file", {});
  ds.Error("7", "a-10-1", {"a.yaml", 10, 1});
  ds.Error("8", "a-2-3 third", {"a.yaml", 2, 3});
  ds.SortByLocation();
  std::vector<std::string> order;
  for (const auto& d : ds.items()) order.push_back(d.message);
  EXPECT_EQ(order, (std::vector<std::string>{"no file", "a-unknown", "a-2-3 first",
                                             "a-2-3 second", "a-2-3 third", "a-2-9",
                                             "a-10-1", "b-5-1"}));
}

// ---------------------------------------------------------------------------
// SourceMap

TEST(DiagnosticTestSourceMap, LocatesValuesAndFallsBackToNearestAncestor) {
  SourceMap map("spec.yaml");
  EXPECT_EQ(map.file(), "spec.yaml");
  map.SetValue("", {1, 1});
  map.SetValue("/spec", {3, 3});
  map.SetKey("/spec", {2, 1});
  map.SetValue("/spec/stages/train", {5, 7});
  map.SetKey("/spec/stages/train", {5, 5});
  map.SetValue("/spec/stages/train/nodes", {6, 14});
  map.SetKey("/spec/stages/train/nodes", {6, 7});

  Location l = map.Locate("/spec/stages/train/nodes");
  EXPECT_EQ(l.file, "spec.yaml");
  EXPECT_EQ(l.line, 6);
  EXPECT_EQ(l.column, 14);

  // A missing field: the nearest recorded ancestor, at its value.
  l = map.Locate("/spec/stages/train/replicas");
  EXPECT_EQ(l.line, 5);
  EXPECT_EQ(l.column, 7);
  // Two levels missing; /spec/stages itself is not recorded either.
  l = map.Locate("/spec/stages/eval/nodes");
  EXPECT_EQ(l.line, 3);
  EXPECT_EQ(l.column, 3);
  l = map.Locate("/metadata/name");
  EXPECT_EQ(l.line, 1);
  EXPECT_EQ(l.column, 1);
  EXPECT_TRUE(map.Has("/spec"));
  EXPECT_FALSE(map.Has("/spec/stages"));
}

TEST(DiagnosticTestSourceMap, GraftCopiesPositionsAndEraseForgetsThem) {
  SourceMap map("f.yaml");
  map.SetValue("/a/b", {3, 4});
  map.SetKey("/a/b", {3, 1});
  map.SetValue("/a/bc", {9, 9});
  map.SetValue("/x/b", {7, 2});
  map.Erase("/x/b");
  EXPECT_EQ(map.Locate("/x/b").line, 0);
  map.Graft("/a/b", "/x/b");
  EXPECT_EQ(map.Locate("/x/b").line, 3);
  EXPECT_EQ(map.Locate("/x/b", true).column, 1);
  EXPECT_FALSE(map.Has("/x/bc"));  // a sibling sharing the prefix is not grafted
  map.Erase("/a");
  EXPECT_FALSE(map.Has("/a/b"));
  EXPECT_TRUE(map.Has("/x/b"));
}

TEST(DiagnosticTestSourceMap, PrefersKeysWhenAsked) {
  SourceMap map("spec.yaml");
  map.SetValue("/spec", {3, 3});
  map.SetKey("/spec", {2, 1});
  map.SetValue("/spec/nodes", {4, 10});
  map.SetKey("/spec/nodes", {4, 3});

  Location l = map.Locate("/spec/nodes", /*prefer_key=*/true);
  EXPECT_EQ(l.line, 4);
  EXPECT_EQ(l.column, 3);
  l = map.Locate("/spec/nodes", /*prefer_key=*/false);
  EXPECT_EQ(l.line, 4);
  EXPECT_EQ(l.column, 10);
  // An ancestor found on the way up is located at its value, not its key.
  l = map.Locate("/spec/missing", /*prefer_key=*/true);
  EXPECT_EQ(l.line, 3);
  EXPECT_EQ(l.column, 3);
}

TEST(DiagnosticTestSourceMap, KeyOnlyIsUsedWhenNoValueIsRecorded) {
  SourceMap map("spec.yaml");
  map.SetKey("/a", {7, 2});
  Location l = map.Locate("/a");
  EXPECT_EQ(l.line, 7);
  EXPECT_EQ(l.column, 2);
}

TEST(DiagnosticTestSourceMap, NothingRecordedIsUnknownInTheFile) {
  SourceMap map("spec.yaml");
  Location l = map.Locate("/a/b");
  EXPECT_EQ(l.file, "spec.yaml");
  EXPECT_EQ(l.line, 0);
  EXPECT_FALSE(l.known());
}

TEST(DiagnosticTestSourceMap, OverridesCoverThePointerAndItsChildrenOnly) {
  SourceMap map("spec.yaml");
  map.SetValue("/spec", {2, 3});
  map.SetValue("/spec/stage", {3, 10});
  map.SetValue("/spec/stages", {4, 10});
  map.SetValue("/spec/stages/train/nodes", {6, 14});
  map.SetOverride("/spec/stages", {"--set spec.stages={}", 0, 0});

  for (const char* p : {"/spec/stages", "/spec/stages/train/nodes", "/spec/stages/x"}) {
    Location l = map.Locate(p);
    EXPECT_EQ(l.file, "--set spec.stages={}") << p;
    EXPECT_EQ(l.line, 0) << p;
  }
  // Parent, and a sibling whose name is a prefix: still from the file.
  Location l = map.Locate("/spec");
  EXPECT_EQ(l.file, "spec.yaml");
  EXPECT_EQ(l.line, 2);
  l = map.Locate("/spec/stage");
  EXPECT_EQ(l.file, "spec.yaml");
  EXPECT_EQ(l.line, 3);
  EXPECT_TRUE(map.Has("/spec/stages"));
}

// ---------------------------------------------------------------------------
// Pointers

TEST(DiagnosticTestPointer, PointerToDotted) {
  const std::pair<const char*, const char*> cases[] = {
      {"/spec/targets/0/name", "spec.targets[0].name"},
      {"/spec/stages/train/nodes", "spec.stages.train.nodes"},
      {"", ""},
      {"/spec", "spec"},
      {"/0", "[0]"},
      {"/a/12/3/b", "a[12][3].b"},
      {"/labels/a~1b", "labels.a/b"},
      {"/labels/a~0b", "labels.a~b"},
      {"/x/~01", "x.~1"},
      {"/x/~1~0", "x./~"},
      {"/a/1x", "a.1x"},
  };
  for (const auto& [pointer, dotted] : cases) {
    EXPECT_EQ(PointerToDotted(pointer), dotted) << pointer;
  }
}

TEST(DiagnosticTestPointer, EscapePointerToken) {
  EXPECT_EQ(EscapePointerToken("plain"), "plain");
  EXPECT_EQ(EscapePointerToken(""), "");
  EXPECT_EQ(EscapePointerToken("a/b"), "a~1b");
  EXPECT_EQ(EscapePointerToken("a~b"), "a~0b");
  EXPECT_EQ(EscapePointerToken("~1/"), "~01~1");
  EXPECT_EQ(EscapePointerToken("nvidia.com/gpu"), "nvidia.com~1gpu");
  // Round trip through the dotted form.
  EXPECT_EQ(PointerToDotted("/" + EscapePointerToken("~1/")), "~1/");
}

TEST(RenderGithubTest, EscapesAndLocates) {
  Diagnostics d;
  d.Error("check.stale", "50% done,\nsecond line", {"out/a,b:c", 0, 0}, "git rm -r out/a");
  d.Warning("spec.x", "w", {"s.yaml", 3, 7});
  EXPECT_EQ(RenderGithub(d),
            "::error file=out/a%2Cb%3Ac,title=nemoc check.stale::50%25 done,\\x0Asecond line%0Ahint: git rm -r out/a\n"
            "::warning file=s.yaml,line=3,col=7,title=nemoc spec.x::w\n");
}

}  // namespace
}  // namespace nemoc
