#include "tree_writer.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <memory>
#include <string>

#include "disk_interface.h"

namespace nemoc {
namespace {

namespace fs = std::filesystem;

const FileTree kV1 = {
    {"00-namespace/namespace.yaml", "kind: Namespace\nname: proj\n"},
    {"30-train/configmap-a.yaml", "kind: ConfigMap\ndata: {a: 1}\n"},
    {"30-train/pytorchjob-a.yaml", "kind: PyTorchJob\nreplicas: 2\n"},
    {"40-eval/job-eval.yaml", "kind: Job\n"},
    {"kustomization.yaml", "resources: []\n"},
};

// vs kV1: one changed, two removed (40-eval/ vanishes), two added, two same.
const FileTree kV2 = {
    {"00-namespace/namespace.yaml", "kind: Namespace\nname: proj\n"},
    {"30-train/configmap-a.yaml", "kind: ConfigMap\ndata: {a: 1}\n"},
    {"30-train/pytorchjob-a.yaml", "kind: PyTorchJob\nreplicas: 4\n"},
    {"50-serve/deployment.yaml", "kind: Deployment\n"},
    {"50-serve/nested/deep/service.yaml", std::string("binary\0bytes\r\n", 14)},
};

bool HasCode(const Diagnostics& diags, const std::string& code) {
  for (const Diagnostic& d : diags.items()) {
    if (d.code == code) return true;
  }
  return false;
}

const Diagnostic* FindCode(const Diagnostics& diags, const std::string& code) {
  for (const Diagnostic& d : diags.items()) {
    if (d.code == code) return &d;
  }
  return nullptr;
}

std::string Dump(const Diagnostics& diags) { return RenderText(diags, {}); }

enum class DiskKind { kMemory, kReal };

std::string DiskName(const ::testing::TestParamInfo<DiskKind>& info) {
  return info.param == DiskKind::kMemory ? "MemoryDisk" : "RealDisk";
}

/// A fresh root (a temp dir for RealDisk, "work" for MemoryDisk) with
/// root/out/proj/ existing; dest is root/out/proj/tgt.
class DiskFixture : public ::testing::TestWithParam<DiskKind> {
 protected:
  void SetUp() override {
    if (GetParam() == DiskKind::kReal) {
      std::string tmpl =
          (fs::temp_directory_path() / "nemoc-tree-writer-XXXXXX").string();
      ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
      root_ = tmpl;
      disk_ = std::make_unique<RealDisk>();
    } else {
      root_ = "work";
      disk_ = std::make_unique<MemoryDisk>();
    }
    proj_ = root_ + "/out/proj";
    dest_ = proj_ + "/tgt";
    tmp_ = proj_ + "/.tgt.nemoc-tmp";
    old_ = proj_ + "/.tgt.nemoc-old";
    std::string err;
    ASSERT_TRUE(disk_->MakeDirs(proj_, &err)) << err;
  }

  void TearDown() override {
    if (GetParam() == DiskKind::kReal && !root_.empty()) {
      std::error_code ec;
      fs::remove_all(root_, ec);
    }
  }

  bool real() const { return GetParam() == DiskKind::kReal; }

  /// Every regular file under `dir` (default: the whole root), with bytes.
  FileTree Snapshot(const std::string& dir = {}) {
    const std::string d = dir.empty() ? root_ : dir;
    TreeListing listing;
    std::string err;
    EXPECT_TRUE(disk_->ListTree(d, &listing, &err)) << err;
    EXPECT_TRUE(listing.others.empty());
    FileTree out;
    for (const std::string& f : listing.files) {
      EXPECT_TRUE(disk_->ReadFile(d + "/" + f, &out[f], &err)) << err;
    }
    return out;
  }

  void Put(const std::string& path, const std::string& bytes) {
    std::string err;
    ASSERT_TRUE(disk_->MakeDirs(fs::path(path).parent_path().string(), &err))
        << err;
    ASSERT_TRUE(disk_->WriteFile(path, bytes, &err)) << err;
  }

  bool Write(const FileTree& tree, WriteResult* r, Diagnostics* diags) {
    return WriteTree(*disk_, dest_, tree, r, diags);
  }

  void WriteOk(const FileTree& tree) {
    WriteResult r;
    Diagnostics diags;
    ASSERT_TRUE(Write(tree, &r, &diags)) << Dump(diags);
    ASSERT_FALSE(diags.has_errors()) << Dump(diags);
  }

  FileTree ReadBack() {
    FileTree tree;
    Diagnostics diags;
    EXPECT_TRUE(ReadTree(*disk_, dest_, &tree, &diags)) << Dump(diags);
    return tree;
  }

  /// Exactly `tree` + marker in dest, and nothing else in out/proj/.
  void ExpectDestIs(const FileTree& tree) {
    FileTree want;
    for (const auto& [path, bytes] : tree) want["tgt/" + path] = bytes;
    want[std::string("tgt/") + kManifestFileName] = ManifestContent(tree);
    EXPECT_EQ(Snapshot(proj_), want);
    EXPECT_EQ(ReadBack(), tree);
    ExpectNoLitter();
  }

  void ExpectNoLitter() {
    EXPECT_FALSE(disk_->Exists(tmp_)) << tmp_;
    EXPECT_FALSE(disk_->Exists(old_)) << old_;
  }

  std::string root_, proj_, dest_, tmp_, old_;
  std::unique_ptr<Disk> disk_;
};

// --- Disk contract, both implementations -------------------------------------

using DiskContractTest = DiskFixture;

TEST_P(DiskContractTest, WriteReadStatList) {
  std::string err, got;
  FileKind kind;
  ASSERT_TRUE(disk_->MakeDirs(root_ + "/a/b/c", &err)) << err;
  ASSERT_TRUE(disk_->MakeDirs(root_ + "/a/b/c", &err)) << err;  // idempotent
  ASSERT_TRUE(disk_->WriteFile(root_ + "/a/b/c/f.txt", "xy", &err)) << err;
  ASSERT_TRUE(disk_->WriteFile(root_ + "/a/z.txt", "", &err)) << err;
  ASSERT_TRUE(disk_->WriteFile(root_ + "/a/b/c/f.txt", "new", &err)) << err;
  ASSERT_TRUE(disk_->ReadFile(root_ + "/a/b/c/f.txt", &got, &err)) << err;
  EXPECT_EQ(got, "new");
  ASSERT_TRUE(disk_->Stat(root_ + "/a/b", &kind, &err));
  EXPECT_EQ(kind, FileKind::kDirectory);
  ASSERT_TRUE(disk_->Stat(root_ + "/a/z.txt", &kind, &err));
  EXPECT_EQ(kind, FileKind::kRegular);
  ASSERT_TRUE(disk_->Stat(root_ + "/nope", &kind, &err));
  EXPECT_EQ(kind, FileKind::kMissing);
  EXPECT_TRUE(disk_->IsDir(root_ + "/a/"));
  EXPECT_FALSE(disk_->IsDir(root_ + "/a/z.txt"));
  EXPECT_TRUE(disk_->Exists(root_ + "/a/z.txt"));

  ASSERT_TRUE(disk_->MakeDirs(root_ + "/a/empty", &err)) << err;
  ASSERT_TRUE(disk_->MakeDirs(root_ + "/a/nested/empty", &err)) << err;
  TreeListing listing;
  ASSERT_TRUE(disk_->ListTree(root_ + "/a", &listing, &err)) << err;
  EXPECT_EQ(listing.files, (std::vector<std::string>{"b/c/f.txt", "z.txt"}));
  EXPECT_TRUE(listing.others.empty());
  // Only directories with nothing in them; a/nested holds a directory.
  EXPECT_EQ(listing.empty_dirs, (std::vector<std::string>{"empty", "nested/empty"}));

  // Failures are values with a message, not exceptions.
  err.clear();
  EXPECT_FALSE(disk_->ReadFile(root_ + "/nope", &got, &err));
  EXPECT_NE(err.find("nope"), std::string::npos) << err;
  err.clear();
  EXPECT_FALSE(disk_->WriteFile(root_ + "/missing/f", "x", &err));
  EXPECT_FALSE(err.empty());
  err.clear();
  EXPECT_FALSE(disk_->MakeDirs(root_ + "/a/z.txt/sub", &err));
  EXPECT_FALSE(err.empty());
  EXPECT_FALSE(disk_->ListTree(root_ + "/a/z.txt", &listing, &err));
  EXPECT_FALSE(disk_->ListTree(root_ + "/nope", &listing, &err));
}

TEST_P(DiskContractTest, RenameMovesWholeDirectoryAndRemoveTree) {
  std::string err;
  Put(root_ + "/d/x", "1");
  Put(root_ + "/d/sub/y", "2");
  Put(root_ + "/dd/keep", "3");  // shares the "d" prefix, must not move
  ASSERT_TRUE(disk_->MakeDirs(root_ + "/d/emptysub", &err));
  ASSERT_TRUE(disk_->Rename(root_ + "/d", root_ + "/e", &err)) << err;
  EXPECT_FALSE(disk_->Exists(root_ + "/d"));
  EXPECT_TRUE(disk_->IsDir(root_ + "/e/emptysub"));
  EXPECT_EQ(Snapshot(), (FileTree{{"e/x", "1"}, {"e/sub/y", "2"}, {"dd/keep", "3"}}));

  // The target must not exist; the source must.
  EXPECT_FALSE(disk_->Rename(root_ + "/e", root_ + "/dd", &err));
  EXPECT_FALSE(disk_->Rename(root_ + "/nope", root_ + "/other", &err));
  ASSERT_TRUE(disk_->Rename(root_ + "/e/x", root_ + "/x", &err)) << err;

  ASSERT_TRUE(disk_->RemoveTree(root_ + "/e", &err)) << err;
  ASSERT_TRUE(disk_->RemoveTree(root_ + "/e", &err)) << err;  // already gone
  ASSERT_TRUE(disk_->RemoveTree(root_ + "/x", &err)) << err;  // a file
  EXPECT_FALSE(disk_->Exists(root_ + "/e"));
  EXPECT_EQ(Snapshot(), (FileTree{{"dd/keep", "3"}}));
}

INSTANTIATE_TEST_SUITE_P(Disks, DiskContractTest,
                         ::testing::Values(DiskKind::kMemory, DiskKind::kReal),
                         DiskName);

// --- WriteTree / ReadTree, both disks ----------------------------------------

using TreeWriterTest = DiskFixture;

TEST_P(TreeWriterTest, FirstWriteCreatesFilesAndMarker) {
  WriteResult r;
  Diagnostics diags;
  ASSERT_TRUE(Write(kV1, &r, &diags)) << Dump(diags);
  EXPECT_TRUE(diags.empty()) << Dump(diags);
  EXPECT_TRUE(r.wrote);
  EXPECT_EQ(r.added, 5);
  EXPECT_EQ(r.changed + r.removed + r.unchanged, 0);
  ExpectDestIs(kV1);
  std::string marker, err;
  ASSERT_TRUE(disk_->ReadFile(dest_ + "/" + kManifestFileName, &marker, &err));
  EXPECT_EQ(marker,
            "00-namespace/namespace.yaml\n30-train/configmap-a.yaml\n"
            "30-train/pytorchjob-a.yaml\n40-eval/job-eval.yaml\n"
            "kustomization.yaml\n");
}

TEST_P(TreeWriterTest, FirstWriteCreatesMissingParents) {
  dest_ = root_ + "/fresh/deeper/tgt";
  tmp_ = root_ + "/fresh/deeper/.tgt.nemoc-tmp";
  old_ = root_ + "/fresh/deeper/.tgt.nemoc-old";
  WriteOk(kV1);
  EXPECT_EQ(ReadBack(), kV1);
  ExpectNoLitter();
}

TEST_P(TreeWriterTest, EmptyTreeWritesOnlyMarker) {
  WriteOk({});
  ExpectDestIs({});
  WriteOk(kV1);
  ExpectDestIs(kV1);
  WriteOk({});
  ExpectDestIs({});
}

TEST_P(TreeWriterTest, IdenticalRewriteWritesNothing) {
  WriteOk(kV1);
  struct Stamp {
    ino_t ino;
    struct timespec mtime;
  };
  std::map<std::string, Stamp> before;
  auto stamp = [&](const std::string& path) {
    struct stat st;
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return Stamp{st.st_ino, st.st_mtim};
  };
  std::vector<std::string> paths = {dest_, dest_ + "/" + kManifestFileName};
  for (const auto& [rel, bytes] : kV1) paths.push_back(dest_ + "/" + rel);
  int mutations_before = 0;
  if (real()) {
    // Back-date everything so a rewrite could not hide inside one clock tick.
    const auto past = fs::file_time_type::clock::now() - std::chrono::hours(1);
    for (const std::string& p : paths) {
      std::error_code ec;
      fs::last_write_time(p, past, ec);
      ASSERT_FALSE(ec) << p << ": " << ec.message();
      before[p] = stamp(p);
    }
  } else {
    mutations_before = static_cast<MemoryDisk&>(*disk_).mutations();
  }

  WriteResult r;
  Diagnostics diags;
  ASSERT_TRUE(Write(kV1, &r, &diags)) << Dump(diags);
  EXPECT_TRUE(diags.empty()) << Dump(diags);
  EXPECT_FALSE(r.wrote);
  EXPECT_EQ(r.unchanged, 5);
  EXPECT_EQ(r.added + r.changed + r.removed, 0);
  ExpectDestIs(kV1);
  if (real()) {
    for (const std::string& p : paths) {
      Stamp now = stamp(p);
      EXPECT_EQ(now.ino, before[p].ino) << p;
      EXPECT_EQ(now.mtime.tv_sec, before[p].mtime.tv_sec) << p;
      EXPECT_EQ(now.mtime.tv_nsec, before[p].mtime.tv_nsec) << p;
    }
  } else {
    EXPECT_EQ(static_cast<MemoryDisk&>(*disk_).mutations(), mutations_before);
  }
}

TEST_P(TreeWriterTest, ChangedTreeReplacesExactly) {
  WriteOk(kV1);
  WriteResult r;
  Diagnostics diags;
  ASSERT_TRUE(Write(kV2, &r, &diags)) << Dump(diags);
  EXPECT_TRUE(diags.empty()) << Dump(diags);
  EXPECT_TRUE(r.wrote);
  EXPECT_EQ(r.added, 2);
  EXPECT_EQ(r.changed, 1);
  EXPECT_EQ(r.removed, 2);
  EXPECT_EQ(r.unchanged, 2);
  ExpectDestIs(kV2);
  EXPECT_FALSE(disk_->Exists(dest_ + "/40-eval"));  // stale dir gone too
  EXPECT_FALSE(disk_->Exists(dest_ + "/kustomization.yaml"));
}

TEST_P(TreeWriterTest, MarkerChangeAloneIsAWrite) {
  // A generated file deleted by hand: the bytes of the surviving files match
  // but the tree does not, so the writer restores it.
  WriteOk(kV1);
  std::string err;
  ASSERT_TRUE(disk_->RemoveTree(dest_ + "/kustomization.yaml", &err));
  EXPECT_EQ(DiffTrees(ReadBack(), kV1),
            (std::vector<std::pair<char, std::string>>{{'A', "kustomization.yaml"}}));
  WriteResult r;
  Diagnostics diags;
  ASSERT_TRUE(Write(kV1, &r, &diags)) << Dump(diags);
  EXPECT_TRUE(r.wrote);
  EXPECT_EQ(r.added, 1);
  EXPECT_EQ(r.unchanged, 4);
  ExpectDestIs(kV1);
}

TEST_P(TreeWriterTest, ForeignFileRefusedAndNothingTouched) {
  WriteOk(kV1);
  Put(dest_ + "/NOTES.md", "my notes\n");
  const FileTree before = Snapshot();
  WriteResult r;
  Diagnostics diags;
  EXPECT_FALSE(Write(kV2, &r, &diags));
  EXPECT_FALSE(r.wrote);
  const Diagnostic* d = FindCode(diags, "output.foreign-file");
  ASSERT_NE(d, nullptr) << Dump(diags);
  EXPECT_EQ(d->severity, Severity::kError);
  EXPECT_EQ(d->location.file, dest_ + "/NOTES.md");
  EXPECT_NE(d->message.find("NOTES.md"), std::string::npos) << d->message;
  EXPECT_EQ(diags.error_count(), 1u) << Dump(diags);
  EXPECT_EQ(Snapshot(), before);
  ExpectNoLitter();

  // `nemoc check` is refused the same way.
  FileTree tree;
  Diagnostics read_diags;
  EXPECT_FALSE(ReadTree(*disk_, dest_, &tree, &read_diags));
  EXPECT_TRUE(HasCode(read_diags, "output.foreign-file")) << Dump(read_diags);
}

TEST_P(TreeWriterTest, HandAddedFilesInSubdirsAreForeign) {
  WriteOk(kV1);
  Put(dest_ + "/30-train/extra-service.yaml", "kind: Service\n");
  Put(dest_ + "/30-train/" + kManifestFileName, "extra-service.yaml\n");
  Put(dest_ + "/.git/config", "[core]\n");
  const FileTree before = Snapshot();
  Diagnostics diags;
  EXPECT_FALSE(Write(kV1, nullptr, &diags));
  EXPECT_EQ(diags.error_count(), 3u) << Dump(diags);
  std::vector<std::string> files;
  for (const Diagnostic& d : diags.items()) {
    EXPECT_EQ(d.code, "output.foreign-file");
    files.push_back(d.location.file);
  }
  EXPECT_EQ(files, (std::vector<std::string>{
                       dest_ + "/.git/config",
                       dest_ + "/30-train/" + kManifestFileName,
                       dest_ + "/30-train/extra-service.yaml"}));
  EXPECT_EQ(Snapshot(), before);
  ExpectNoLitter();
}

TEST_P(TreeWriterTest, TamperedMarkerCannotClaimHiddenFiles) {
  WriteOk(kV1);
  Put(dest_ + "/.env", "SECRET=1\n");
  Put(dest_ + "/" + kManifestFileName,
      ManifestContent(kV1) + ".env\n../escape\n");
  Diagnostics diags;
  EXPECT_FALSE(Write(kV1, nullptr, &diags));
  const Diagnostic* d = FindCode(diags, "output.foreign-file");
  ASSERT_NE(d, nullptr) << Dump(diags);
  EXPECT_EQ(d->location.file, dest_ + "/.env");
  std::string err, got;
  EXPECT_TRUE(disk_->ReadFile(dest_ + "/.env", &got, &err));
}

TEST_P(TreeWriterTest, NonNemocDirRefused) {
  Put(dest_ + "/README.md", "hand made\n");
  Put(dest_ + "/deploy.yaml", "kind: Pod\n");
  const FileTree before = Snapshot();
  Diagnostics diags;
  EXPECT_FALSE(Write(kV1, nullptr, &diags));
  const Diagnostic* d = FindCode(diags, "output.not-nemoc-dir");
  ASSERT_NE(d, nullptr) << Dump(diags);
  EXPECT_EQ(d->location.file, dest_);
  EXPECT_NE(d->message.find(kManifestFileName), std::string::npos);
  EXPECT_EQ(Snapshot(), before);
  ExpectNoLitter();

  FileTree tree;
  Diagnostics read_diags;
  EXPECT_FALSE(ReadTree(*disk_, dest_, &tree, &read_diags));
  EXPECT_TRUE(HasCode(read_diags, "output.not-nemoc-dir"));
}

TEST_P(TreeWriterTest, EmptyDirWithoutMarkerIsTakenOver) {
  std::string err;
  ASSERT_TRUE(disk_->MakeDirs(dest_, &err));
  FileTree tree;
  Diagnostics diags;
  EXPECT_TRUE(ReadTree(*disk_, dest_, &tree, &diags)) << Dump(diags);
  EXPECT_TRUE(tree.empty());
  WriteOk(kV1);
  ExpectDestIs(kV1);
}

// E14: nemoc writes files only, so a directory with nothing in it was made by
// someone else; the swap used to delete it without a word.
TEST_P(TreeWriterTest, EmptyUserDirectoryIsRefusedNotDeleted) {
  std::string err;
  ASSERT_TRUE(disk_->MakeDirs(dest_ + "/only/empty/dirs", &err));
  Diagnostics diags;
  EXPECT_FALSE(Write(kV1, nullptr, &diags));
  EXPECT_TRUE(HasCode(diags, "output.not-nemoc-dir")) << Dump(diags);
  EXPECT_TRUE(disk_->IsDir(dest_ + "/only/empty/dirs"));

  ASSERT_TRUE(disk_->RemoveTree(dest_, &err)) << err;
  WriteOk(kV1);
  ASSERT_TRUE(disk_->MakeDirs(dest_ + "/30-train/scratch", &err));
  const FileTree before = Snapshot();
  Diagnostics diags2;
  EXPECT_FALSE(Write(kV2, nullptr, &diags2));
  const Diagnostic* d = FindCode(diags2, "output.foreign-file");
  ASSERT_NE(d, nullptr) << Dump(diags2);
  EXPECT_EQ(d->location.file, dest_ + "/30-train/scratch");
  EXPECT_NE(d->message.find("empty directory"), std::string::npos) << d->message;
  EXPECT_TRUE(disk_->IsDir(dest_ + "/30-train/scratch"));
  EXPECT_EQ(Snapshot(), before);
  ExpectNoLitter();
}

TEST_P(TreeWriterTest, DestThatIsAFileRefused) {
  Put(dest_, "i am a file\n");
  Diagnostics diags;
  EXPECT_FALSE(Write(kV1, nullptr, &diags));
  EXPECT_TRUE(HasCode(diags, "output.not-a-directory")) << Dump(diags);
  EXPECT_EQ(Snapshot(), (FileTree{{"out/proj/tgt", "i am a file\n"}}));
}

TEST_P(TreeWriterTest, BadPathsRejectedNothingWritten) {
  const std::vector<std::string> bad = {
      "../x", "/abs", "a//b", ".hidden", "a/.hidden/b", "a/./b", "a/..", "a/",
      "", "a\\b", std::string("a\0b", 3), "a\nb", kManifestFileName,
      std::string("sub/") + kManifestFileName};
  for (bool existing : {false, true}) {
    if (existing) WriteOk(kV1);
    const FileTree before = Snapshot();
    for (const std::string& path : bad) {
      SCOPED_TRACE(::testing::Message() << "path " << ::testing::PrintToString(path)
                                        << (existing ? " over v1" : " fresh"));
      FileTree tree = kV2;
      tree[path] = "x";
      WriteResult r;
      Diagnostics diags;
      EXPECT_FALSE(Write(tree, &r, &diags));
      EXPECT_FALSE(r.wrote);
      EXPECT_EQ(diags.error_count(), 1u) << Dump(diags);
      EXPECT_TRUE(HasCode(diags, "output.bad-path")) << Dump(diags);
      EXPECT_EQ(Snapshot(), before);
      EXPECT_EQ(disk_->Exists(dest_), existing);
      ExpectNoLitter();
    }
  }
}

TEST_P(TreeWriterTest, FileThatIsAlsoADirectoryRejected) {
  Diagnostics diags;
  EXPECT_FALSE(Write({{"a", "1"}, {"a-b", "2"}, {"a/b", "3"}}, nullptr, &diags));
  EXPECT_TRUE(HasCode(diags, "output.bad-path")) << Dump(diags);
  EXPECT_FALSE(disk_->Exists(dest_));
}

TEST_P(TreeWriterTest, BadDestRejected) {
  // Only names that stay bad after lexical normalisation ("a/.." is ".").
  for (const char* dest : {"", ".", "/", "..", "../..", "x/..", "x/../"}) {
    Diagnostics diags;
    EXPECT_FALSE(WriteTree(*disk_, dest, kV1, nullptr, &diags)) << dest;
    EXPECT_TRUE(HasCode(diags, "output.bad-dest")) << Dump(diags);
  }
}

TEST_P(TreeWriterTest, TrailingSlashDestIsTheSameDir) {
  WriteOk(kV1);
  WriteResult r;
  Diagnostics diags;
  ASSERT_TRUE(WriteTree(*disk_, dest_ + "/", kV1, &r, &diags)) << Dump(diags);
  EXPECT_FALSE(r.wrote);
  FileTree tree;
  ASSERT_TRUE(ReadTree(*disk_, proj_ + "/./tgt/", &tree, &diags));
  EXPECT_EQ(tree, kV1);
}

TEST_P(TreeWriterTest, LeftoverTmpFromCrashIsCleaned) {
  WriteOk(kV1);
  // What a crash mid-staging leaves: the marker (written first), part of the files.
  Put(tmp_ + "/" + kManifestFileName, ManifestContent(kV2));
  Put(tmp_ + "/30-train/half-written.yaml", "kind: Pod\nspe");
  WriteResult r;
  Diagnostics diags;
  ASSERT_TRUE(Write(kV2, &r, &diags)) << Dump(diags);
  EXPECT_FALSE(diags.has_errors()) << Dump(diags);
  EXPECT_TRUE(HasCode(diags, "output.recovered")) << Dump(diags);
  EXPECT_EQ(r.changed, 1);
  ExpectDestIs(kV2);
}

TEST_P(TreeWriterTest, LeftoverTmpCleanedEvenWhenTreeUnchanged) {
  WriteOk(kV1);
  Put(tmp_ + "/" + kManifestFileName, "x.yaml\n");
  Put(tmp_ + "/x.yaml", "partial");
  WriteResult r;
  Diagnostics diags;
  ASSERT_TRUE(Write(kV1, &r, &diags)) << Dump(diags);
  EXPECT_FALSE(r.wrote);
  ExpectDestIs(kV1);
}

TEST_P(TreeWriterTest, LeftoverOldWithMissingDestIsRestoredThenReplaced) {
  WriteOk(kV1);
  std::string err;
  // The crash window between "dest -> old" and "tmp -> dest".
  ASSERT_TRUE(disk_->Rename(dest_, old_, &err)) << err;
  Put(tmp_ + "/" + kManifestFileName, "kustomization.yaml\n");
  Put(tmp_ + "/kustomization.yaml", "complete or not, it is discarded");
  EXPECT_TRUE(ReadBack().empty());  // dest missing: nothing generated

  WriteResult r;
  Diagnostics diags;
  ASSERT_TRUE(Write(kV2, &r, &diags)) << Dump(diags);
  EXPECT_FALSE(diags.has_errors()) << Dump(diags);
  EXPECT_TRUE(HasCode(diags, "output.recovered")) << Dump(diags);
  // Counted against the restored v1, so the restore really happened.
  EXPECT_EQ(r.added, 2);
  EXPECT_EQ(r.changed, 1);
  EXPECT_EQ(r.removed, 2);
  EXPECT_EQ(r.unchanged, 2);
  ExpectDestIs(kV2);
}

TEST_P(TreeWriterTest, LeftoverOldNextToCompleteDestIsRemoved) {
  // The crash window between "tmp -> dest" and "remove old".
  WriteOk(kV2);
  Put(old_ + "/kustomization.yaml", "resources: []\n");
  Put(old_ + std::string("/") + kManifestFileName, "kustomization.yaml\n");
  WriteResult r;
  Diagnostics diags;
  ASSERT_TRUE(Write(kV2, &r, &diags)) << Dump(diags);
  EXPECT_FALSE(r.wrote);
  EXPECT_TRUE(HasCode(diags, "output.recovered"));
  ExpectDestIs(kV2);
}

TEST_P(TreeWriterTest, EmptyLeftoverTmpIsRemoved) {
  // A crash between the mkdir and the marker.
  WriteOk(kV1);
  std::string err;
  ASSERT_TRUE(disk_->MakeDirs(tmp_, &err)) << err;
  WriteResult r;
  Diagnostics diags;
  ASSERT_TRUE(Write(kV2, &r, &diags)) << Dump(diags);
  EXPECT_TRUE(HasCode(diags, "output.recovered")) << Dump(diags);
  ExpectDestIs(kV2);
}

// E14: the reserved siblings are removed or restored only when nemoc made
// them (its marker inside, or nothing at all).
TEST_P(TreeWriterTest, UserDirectoriesWithReservedNamesAreNeverRemoved) {
  for (const bool old_side : {false, true}) {
    SCOPED_TRACE(old_side ? "old" : "tmp");
    const std::string& sibling = old_side ? old_ : tmp_;
    for (const bool dest_exists : {true, false}) {
      SCOPED_TRACE(dest_exists ? "dest exists" : "no dest");
      std::string err;
      ASSERT_TRUE(disk_->RemoveTree(dest_, &err)) << err;
      if (dest_exists) WriteOk(kV1);
      Put(sibling + "/my-notes/plan.md", "mine\n");
      const FileTree before = Snapshot();
      Diagnostics diags;
      EXPECT_FALSE(Write(kV2, nullptr, &diags));
      const Diagnostic* d = FindCode(diags, "output.foreign-leftover");
      ASSERT_NE(d, nullptr) << Dump(diags);
      EXPECT_EQ(d->location.file, sibling);
      EXPECT_NE(d->message.find(kManifestFileName), std::string::npos) << d->message;
      EXPECT_EQ(Snapshot(), before);
      ASSERT_TRUE(disk_->RemoveTree(sibling, &err)) << err;
    }
  }
  // A file where nemoc would put a directory.
  Put(old_, "not a tree\n");
  Diagnostics diags;
  EXPECT_FALSE(Write(kV2, nullptr, &diags));
  EXPECT_TRUE(HasCode(diags, "output.foreign-leftover")) << Dump(diags);
  std::string err, got;
  EXPECT_TRUE(disk_->ReadFile(old_, &got, &err)) << err;
}

// E16: a stage whose Recover() refused a user's directory under the
// reserved name must not remove it when the build is abandoned -- nemoc
// printed that it refused, then AbandonStaged removed it anyway.
TEST_P(TreeWriterTest, AbandoningARefusedStageKeepsTheUsersDirectory) {
  Put(tmp_ + "/thesis.tex", "years of work\n");
  for (bool all : {false, true}) {
    StagedTree staged;
    Diagnostics diags;
    EXPECT_FALSE(StageTree(*disk_, dest_, kV1, &staged, &diags));
    EXPECT_TRUE(HasCode(diags, "output.foreign-leftover")) << Dump(diags);
    if (all) {
      AbandonAllStaged(*disk_, {&staged});
    } else {
      AbandonStaged(*disk_, &staged);
    }
    std::string err, got;
    EXPECT_TRUE(disk_->ReadFile(tmp_ + "/thesis.tex", &got, &err)) << err;
  }
}

// E27: two targets of a new project are staged, then the build fails (disk
// full on a third). Abandoning them in build order left out/<project>/
// behind: the first target made it, and it still held the second's
// temporary tree when the first was abandoned.
TEST_P(TreeWriterTest, AbandoningANewProjectsTargetsRemovesItsDirectory) {
  const std::string project = root_ + "/out/fresh";
  std::vector<StagedTree> staged(2);
  Diagnostics diags;
  ASSERT_TRUE(StageTree(*disk_, project + "/a", kV1, &staged[0], &diags)) << Dump(diags);
  ASSERT_TRUE(StageTree(*disk_, project + "/b", kV1, &staged[1], &diags)) << Dump(diags);
  EXPECT_TRUE(disk_->IsDir(project));
  AbandonAllStaged(*disk_, {&staged[0], &staged[1]});
  EXPECT_FALSE(disk_->Exists(project));
  EXPECT_TRUE(disk_->IsDir(root_ + "/out/proj"));  // not made by them: kept
}

TEST_P(TreeWriterTest, ReadTreeOfMissingDirIsEmpty) {
  FileTree tree = {{"stale", "x"}};
  Diagnostics diags;
  EXPECT_TRUE(ReadTree(*disk_, dest_, &tree, &diags));
  EXPECT_TRUE(tree.empty());
  EXPECT_TRUE(diags.empty());
  EXPECT_FALSE(disk_->Exists(dest_));
}

INSTANTIATE_TEST_SUITE_P(Disks, TreeWriterTest,
                         ::testing::Values(DiskKind::kMemory, DiskKind::kReal),
                         DiskName);

// --- RealDisk only: symlinks, modes, a real crash ------------------------------

using RealTreeWriterTest = DiskFixture;

TEST_P(RealTreeWriterTest, SymlinkInDestIsForeign) {
  WriteOk(kV1);
  // Even when the marker names it: nemoc never creates symlinks.
  ASSERT_EQ(::symlink("/etc/hostname", (dest_ + "/linked.yaml").c_str()), 0);
  Put(dest_ + "/" + kManifestFileName, ManifestContent(kV1) + "linked.yaml\n");
  Diagnostics diags;
  EXPECT_FALSE(Write(kV1, nullptr, &diags));
  const Diagnostic* d = FindCode(diags, "output.foreign-file");
  ASSERT_NE(d, nullptr) << Dump(diags);
  EXPECT_EQ(d->location.file, dest_ + "/linked.yaml");
  struct stat st;
  EXPECT_EQ(::lstat((dest_ + "/linked.yaml").c_str(), &st), 0);
  ExpectNoLitter();
}

TEST_P(RealTreeWriterTest, SymlinkedDestIsRefused) {
  std::string err;
  ASSERT_TRUE(disk_->MakeDirs(root_ + "/elsewhere", &err));
  ASSERT_EQ(::symlink((root_ + "/elsewhere").c_str(), dest_.c_str()), 0);
  Diagnostics diags;
  EXPECT_FALSE(Write(kV1, nullptr, &diags));
  EXPECT_TRUE(HasCode(diags, "output.not-a-directory")) << Dump(diags);
  EXPECT_TRUE(fs::is_symlink(dest_));
}

TEST_P(RealTreeWriterTest, ModesAreExactRegardlessOfUmask) {
  const mode_t saved = ::umask(077);
  WriteOk(kV2);
  ::umask(saved);
  auto mode = [](const std::string& p) {
    struct stat st;
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
  };
  EXPECT_EQ(mode(dest_), 0755u);
  EXPECT_EQ(mode(dest_ + "/50-serve/nested/deep"), 0755u);
  EXPECT_EQ(mode(dest_ + "/50-serve/nested/deep/service.yaml"), 0644u);
  EXPECT_EQ(mode(dest_ + "/" + kManifestFileName), 0644u);
  EXPECT_EQ(mode(dest_ + "/00-namespace/namespace.yaml"), 0644u);
}

// Crash safety with a real crash: the child aborts mid-tree, the parent
// checks that the previous tree survived and that the next run recovers.
TEST_P(RealTreeWriterTest, AbortMidTreeKeepsPreviousTree) {
  WriteOk(kV1);
  const FileTree before = Snapshot(dest_);

  fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rlimit no_core = {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::setenv(kFaultInjectEnv, kFaultWriterMidTree, 1);
    RealDisk disk;
    Diagnostics diags;
    WriteTree(disk, dest_, kV2, nullptr, &diags);
    ::_exit(3);  // not reached when the fault fires
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGABRT);

  // It really died mid-tree: a partial temp dir, whose marker (written
  // first) tells the next run it is nemoc's to remove.
  ASSERT_TRUE(disk_->IsDir(tmp_));
  const FileTree partial = Snapshot(tmp_);
  EXPECT_GT(partial.size(), 1u);
  EXPECT_LT(partial.size(), kV2.size() + 1);
  EXPECT_EQ(partial.count(kManifestFileName), 1u);
  // The previous tree is intact byte for byte.
  EXPECT_EQ(Snapshot(dest_), before);
  EXPECT_EQ(ReadBack(), kV1);

  WriteResult r;
  Diagnostics diags;
  ASSERT_TRUE(Write(kV2, &r, &diags)) << Dump(diags);
  EXPECT_FALSE(diags.has_errors()) << Dump(diags);
  EXPECT_TRUE(r.wrote);
  EXPECT_EQ(r.changed, 1);
  ExpectDestIs(kV2);
}

INSTANTIATE_TEST_SUITE_P(Disks, RealTreeWriterTest,
                         ::testing::Values(DiskKind::kReal), DiskName);

// --- MemoryDisk-only crash and I/O-error simulations -------------------------

constexpr char kMemDest[] = "out/proj/tgt";
constexpr char kMemTmp[] = "out/proj/.tgt.nemoc-tmp";
constexpr char kMemOld[] = "out/proj/.tgt.nemoc-old";

TEST(TreeWriterDeathTest, FaultInjectionAbortsMidTree) {
  EXPECT_DEATH(
      {
        ::setenv(kFaultInjectEnv, kFaultWriterMidTree, 1);
        MemoryDisk disk;
        WriteTree(disk, kMemDest, kV1, nullptr, nullptr);
      },
      "");
}

// What a crashed run may leave: dest is a complete old or new tree, or dest
// is missing and the old tree waits in .nemoc-old.
void ExpectConsistentAfterCrash(MemoryDisk disk) {
  FileTree tree;
  Diagnostics diags;
  if (disk.Exists(kMemDest)) {
    ASSERT_TRUE(ReadTree(disk, kMemDest, &tree, &diags)) << Dump(diags);
    EXPECT_TRUE(tree == kV1 || tree == kV2);
  } else {
    ASSERT_TRUE(ReadTree(disk, kMemOld, &tree, &diags)) << Dump(diags);
    EXPECT_EQ(tree, kV1);
  }
}

void ExpectCleanV2(MemoryDisk& disk) {
  FileTree tree;
  Diagnostics diags;
  ASSERT_TRUE(ReadTree(disk, kMemDest, &tree, &diags)) << Dump(diags);
  EXPECT_EQ(tree, kV2);
  EXPECT_FALSE(disk.Exists(kMemTmp));
  EXPECT_FALSE(disk.Exists(kMemOld));
  for (const auto& [path, bytes] : disk.files()) {
    EXPECT_EQ(path.rfind("out/proj/tgt/", 0), 0u) << path;
  }
}

TEST(TreeWriterCrashTest, CrashAtEveryStepThenAtEveryRecoveryStep) {
  MemoryDisk base;
  ASSERT_TRUE(WriteTree(base, kMemDest, kV1, nullptr, nullptr));
  MemoryDisk probe = base;
  const int start = probe.mutations();
  ASSERT_TRUE(WriteTree(probe, kMemDest, kV2, nullptr, nullptr));
  const int steps = probe.mutations() - start;
  ASSERT_GE(steps, 8);  // dirs, 5 files, marker, 2 renames, 1 removal

  int recovery_runs = 0;
  for (int k = 0; k <= steps; ++k) {
    SCOPED_TRACE(::testing::Message() << "crash after " << k << " steps");
    MemoryDisk crashed = base;
    crashed.CrashAfter(k);
    // The last step removes the old tree; failing there is only a warning.
    Diagnostics diags;
    EXPECT_EQ(WriteTree(crashed, kMemDest, kV2, nullptr, &diags),
              k >= steps - 1)
        << Dump(diags);
    crashed.CrashAfter(-1);
    ExpectConsistentAfterCrash(crashed);

    // The next run may crash too, at any of its own steps.
    MemoryDisk probe2 = crashed;
    const int start2 = probe2.mutations();
    WriteResult probe2_result;
    ASSERT_TRUE(WriteTree(probe2, kMemDest, kV2, &probe2_result, nullptr));
    ExpectCleanV2(probe2);
    const int steps2 = probe2.mutations() - start2;
    for (int j = 0; j < steps2; ++j) {
      SCOPED_TRACE(::testing::Message() << "then after " << j << " steps");
      MemoryDisk again = crashed;
      again.CrashAfter(j);
      Diagnostics diags2;
      EXPECT_EQ(WriteTree(again, kMemDest, kV2, nullptr, &diags2),
                probe2_result.wrote && j == steps2 - 1)
          << Dump(diags2);
      again.CrashAfter(-1);
      ExpectConsistentAfterCrash(again);
      Diagnostics final_diags;
      ASSERT_TRUE(WriteTree(again, kMemDest, kV2, nullptr, &final_diags))
          << Dump(final_diags);
      ExpectCleanV2(again);
      ++recovery_runs;
    }
  }
  EXPECT_GT(recovery_runs, steps);
}

/// A MemoryDisk whose chosen operation fails once.
class FlakyDisk : public MemoryDisk {
 public:
  std::string fail_write;                   // WriteFile of this path fails
  std::pair<std::string, std::string> fail_rename;  // Rename(from, to) fails
  bool fail_remove_old = false;             // RemoveTree(kMemOld) fails

  bool WriteFile(const std::string& path, const std::string& contents,
                 std::string* err) override {
    if (path == fail_write) {
      *err = path + ": No space left on device";
      return false;
    }
    return MemoryDisk::WriteFile(path, contents, err);
  }
  bool Rename(const std::string& from, const std::string& to,
              std::string* err) override {
    if (std::make_pair(from, to) == fail_rename) {
      *err = from + ": Permission denied";
      return false;
    }
    return MemoryDisk::Rename(from, to, err);
  }
  bool RemoveTree(const std::string& path, std::string* err) override {
    if (fail_remove_old && path == kMemOld) {
      *err = path + ": Permission denied";
      return false;
    }
    return MemoryDisk::RemoveTree(path, err);
  }
};

TEST(TreeWriterIoErrorTest, WriteFailureKeepsOldTreeAndRemovesTmp) {
  FlakyDisk disk;
  ASSERT_TRUE(WriteTree(disk, kMemDest, kV1, nullptr, nullptr));
  const auto before = disk.files();
  disk.fail_write = std::string(kMemTmp) + "/50-serve/deployment.yaml";
  WriteResult r;
  Diagnostics diags;
  EXPECT_FALSE(WriteTree(disk, kMemDest, kV2, &r, &diags));
  EXPECT_FALSE(r.wrote);
  const Diagnostic* d = FindCode(diags, "output.io");
  ASSERT_NE(d, nullptr) << Dump(diags);
  EXPECT_NE(d->message.find("No space left"), std::string::npos);
  EXPECT_EQ(disk.files(), before);
  EXPECT_FALSE(disk.Exists(kMemTmp));
}

TEST(TreeWriterIoErrorTest, SwapFailurePutsOldTreeBack) {
  FlakyDisk disk;
  ASSERT_TRUE(WriteTree(disk, kMemDest, kV1, nullptr, nullptr));
  const auto before = disk.files();
  disk.fail_rename = {kMemTmp, kMemDest};
  Diagnostics diags;
  EXPECT_FALSE(WriteTree(disk, kMemDest, kV2, nullptr, &diags));
  EXPECT_TRUE(HasCode(diags, "output.io")) << Dump(diags);
  EXPECT_EQ(disk.files(), before);
  EXPECT_FALSE(disk.Exists(kMemTmp));
  EXPECT_FALSE(disk.Exists(kMemOld));
}

TEST(TreeWriterIoErrorTest, FailureToRemoveOldTreeIsAWarning) {
  FlakyDisk disk;
  ASSERT_TRUE(WriteTree(disk, kMemDest, kV1, nullptr, nullptr));
  disk.fail_remove_old = true;
  WriteResult r;
  Diagnostics diags;
  EXPECT_TRUE(WriteTree(disk, kMemDest, kV2, &r, &diags));
  EXPECT_TRUE(r.wrote);
  EXPECT_FALSE(diags.has_errors());
  EXPECT_TRUE(HasCode(diags, "output.cleanup")) << Dump(diags);
  disk.fail_remove_old = false;
  ASSERT_TRUE(WriteTree(disk, kMemDest, kV2, nullptr, nullptr));
  ExpectCleanV2(disk);
}

// --- Pure helpers -------------------------------------------------------------

TEST(DiffTreesTest, StatusesSortedByPath) {
  const FileTree have = {{"a.yaml", "1"}, {"b/x.yaml", "same"}, {"c.yaml", "old"},
                         {"d.yaml", "gone"}, {"z.yaml", "gone too"}};
  const FileTree want = {{"0.yaml", "new"}, {"a.yaml", "1"}, {"b/x.yaml", "same"},
                         {"c.yaml", "new"}, {"e/f.yaml", "added"}};
  EXPECT_EQ(DiffTrees(have, want),
            (std::vector<std::pair<char, std::string>>{{'A', "0.yaml"},
                                                       {'M', "c.yaml"},
                                                       {'D', "d.yaml"},
                                                       {'A', "e/f.yaml"},
                                                       {'D', "z.yaml"}}));
  EXPECT_TRUE(DiffTrees(have, have).empty());
  EXPECT_TRUE(DiffTrees({}, {}).empty());
  EXPECT_EQ(DiffTrees({}, {{"x", ""}}),
            (std::vector<std::pair<char, std::string>>{{'A', "x"}}));
  EXPECT_EQ(DiffTrees({{"x", ""}}, {}),
            (std::vector<std::pair<char, std::string>>{{'D', "x"}}));
  // Empty vs non-empty bytes is a modification.
  EXPECT_EQ(DiffTrees({{"x", ""}}, {{"x", "\n"}}),
            (std::vector<std::pair<char, std::string>>{{'M', "x"}}));
}

TEST(TreeWriterHelpersTest, IsValidTreePath) {
  std::string why;
  for (const char* ok : {"a", "a/b.yaml", "30-train/pytorchjob-x.yaml", "a..b",
                         "a./b", "x/y/z/w.yaml"}) {
    EXPECT_TRUE(IsValidTreePath(ok, &why)) << ok << ": " << why;
  }
  EXPECT_FALSE(IsValidTreePath("../x", &why));
  EXPECT_EQ(why, "has a \"..\" segment");
  EXPECT_FALSE(IsValidTreePath("/abs", &why));
  EXPECT_EQ(why, "is absolute");
  EXPECT_FALSE(IsValidTreePath("a//b", &why));
  EXPECT_EQ(why, "has an empty segment");
  EXPECT_FALSE(IsValidTreePath(".hidden", &why));
  EXPECT_EQ(why, "has a segment starting with '.'");
  EXPECT_FALSE(IsValidTreePath("a\\b", &why));
  EXPECT_EQ(why, "contains a backslash");
  EXPECT_FALSE(IsValidTreePath(std::string("a\0b", 3), &why));
  EXPECT_EQ(why, "contains a NUL byte");
  EXPECT_FALSE(IsValidTreePath(kManifestFileName, nullptr));
  EXPECT_FALSE(IsValidTreePath("#nemoc-stamp x", &why));
  EXPECT_EQ(why, "starts with '#' (reserved for the marker's stamp lines)");
}

TEST(TreeWriterHelpersTest, StampLinesFollowTheFileListAndAreNotFiles) {
  EXPECT_EQ(ManifestContent({{"b", "x"}}, "#nemoc-stamp s\n"), "b\n#nemoc-stamp s\n");
  MemoryDisk disk;
  ASSERT_TRUE(WriteTree(disk, "out/p/t", kV1, nullptr, nullptr, "#nemoc-stamp one\n"));
  EXPECT_EQ(disk.files().at("out/p/t/.nemoc-manifest"), ManifestContent(kV1) + "#nemoc-stamp one\n");
  // Stamp lines are never taken for generated files, so nothing is foreign
  // and reading back gives the tree alone.
  FileTree back;
  Diagnostics diags;
  ASSERT_TRUE(ReadTree(disk, "out/p/t", &back, &diags)) << RenderText(diags, {});
  EXPECT_EQ(back, kV1);
  // A new stamp on the same tree rewrites the marker.
  WriteResult result;
  ASSERT_TRUE(WriteTree(disk, "out/p/t", kV1, &result, nullptr, "#nemoc-stamp two\n"));
  EXPECT_TRUE(result.wrote);
  EXPECT_EQ(disk.files().at("out/p/t/.nemoc-manifest"), ManifestContent(kV1) + "#nemoc-stamp two\n");
  ASSERT_TRUE(WriteTree(disk, "out/p/t", kV1, &result, nullptr, "#nemoc-stamp two\n"));
  EXPECT_FALSE(result.wrote);
}

TEST(TreeWriterHelpersTest, ManifestContentIsSortedLines) {
  EXPECT_EQ(ManifestContent({}), "");
  EXPECT_EQ(ManifestContent({{"b", "x"}, {"a/c", "y"}}), "a/c\nb\n");
}

TEST(TreeWriterHelpersTest, FaultInjectionEnabledReadsEnvironment) {
  const char* saved = std::getenv(kFaultInjectEnv);
  const std::string saved_value = saved ? saved : "";
  ::unsetenv(kFaultInjectEnv);
  EXPECT_FALSE(FaultInjectionEnabled(kFaultWriterMidTree));
  ::setenv(kFaultInjectEnv, "writer-mid-tree", 1);
  EXPECT_TRUE(FaultInjectionEnabled(kFaultWriterMidTree));
  EXPECT_FALSE(FaultInjectionEnabled("other-point"));
  ::setenv(kFaultInjectEnv, "other-point, writer-mid-tree", 1);
  EXPECT_TRUE(FaultInjectionEnabled(kFaultWriterMidTree));
  ::setenv(kFaultInjectEnv, "writer-mid-tree-not", 1);
  EXPECT_FALSE(FaultInjectionEnabled(kFaultWriterMidTree));
  if (saved) {
    ::setenv(kFaultInjectEnv, saved_value.c_str(), 1);
  } else {
    ::unsetenv(kFaultInjectEnv);
  }
}

}  // namespace
}  // namespace nemoc
