#include "drift.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "libgit2_api.h"

#include "cluster_bundle.h"
#include "tree_writer.h"

namespace nemoc {

std::vector<std::string> StaleTargets(Disk& disk, const CompiledSpec& spec) {
  std::vector<std::string> stale;
  TreeListing listing;
  std::string err;
  if (!spec.all_targets || !disk.IsDir(spec.project_dir) ||
      !disk.ListTree(spec.project_dir, &listing, &err)) {
    return stale;
  }
  std::set<std::string> current;
  for (const auto& t : spec.targets) current.insert(t.name);
  for (const auto& file : listing.files) {
    size_t slash = file.find('/');
    if (slash == std::string::npos) continue;
    std::string dir = file.substr(0, slash);
    if (file.substr(slash + 1) == kManifestFileName && !current.count(dir)) {
      stale.push_back(spec.project_dir + "/" + dir);
    }
  }
  return stale;
}

std::vector<std::string> StaleProjectTargets(Disk& disk, const std::string& out_dir,
                                             const std::vector<CompiledSpec>& compiled) {
  std::vector<std::string> stale;
  TreeListing listing;
  std::string err;
  if (!disk.IsDir(out_dir) || !disk.ListTree(out_dir, &listing, &err)) return stale;
  std::set<std::string> projects;
  for (const auto& spec : compiled) projects.insert(spec.project_dir);
  for (const auto& file : listing.files) {
    // <project>/<target>/.nemoc-manifest, exactly.
    const size_t first = file.find('/');
    const size_t second = first == std::string::npos ? first : file.find('/', first + 1);
    if (second == std::string::npos || file.substr(second + 1) != kManifestFileName) continue;
    const std::string project = file.substr(0, first);
    if (project == "_clusters" || projects.count(out_dir + "/" + project)) continue;
    stale.push_back(out_dir + "/" + file.substr(0, second));
  }
  std::sort(stale.begin(), stale.end());
  return stale;
}

bool ComputeDrift(Disk& disk, const std::vector<CompiledSpec>& compiled,
                  std::vector<FileChange>* changes, Diagnostics* diags, const EngineTable* engines) {
  bool ok = true;
  auto compare = [&](const std::string& dir, const FileTree& want) {
    FileTree have;
    if (!ReadTree(disk, dir, &have, diags)) {
      ok = false;
      return;
    }
    for (const auto& [status, rel] : DiffTrees(have, want)) {
      FileChange change;
      change.status = status;
      change.path = dir + "/" + rel;
      if (status != 'A') change.old_text = have.at(rel);
      if (status != 'D') change.new_text = want.at(rel);
      changes->push_back(std::move(change));
    }
  };
  for (const auto& spec : compiled) {
    for (const auto& target : spec.targets) {
      // A target the build stamp vouches for (inputs and files on disk as
      // recorded) holds no drift; its tree was not generated again.
      if (!target.up_to_date) compare(target.dir, target.tree);
    }
    for (const auto& stale : StaleTargets(disk, spec)) compare(stale, FileTree{});
  }
  // The cluster trees the build would write (cluster_bundle.h).
  std::vector<ClusterTree> clusters;
  if (!ComputeClusterTrees(disk, compiled, &clusters, diags, engines)) ok = false;
  for (const auto& cluster : clusters) compare(cluster.dir, cluster.tree);
  std::sort(changes->begin(), changes->end(),
            [](const FileChange& a, const FileChange& b) { return a.path < b.path; });
  return ok;
}

namespace {

struct PatchText {
  std::string text;
  bool color = false;
};

int CollectLine(const git_diff_delta*, const git_diff_hunk*, const git_diff_line* line, void* payload) {
  auto* out = static_cast<PatchText*>(payload);
  const char* start = "";
  const char* end = out->color ? "\x1b[0m" : "";
  switch (line->origin) {
    case GIT_DIFF_LINE_ADDITION: start = "\x1b[32m"; break;
    case GIT_DIFF_LINE_DELETION: start = "\x1b[31m"; break;
    case GIT_DIFF_LINE_HUNK_HDR: start = "\x1b[36m"; break;
    case GIT_DIFF_LINE_FILE_HDR: start = "\x1b[1m"; break;
    default: end = ""; break;
  }
  if (!out->color) start = "";
  std::string_view content(line->content, line->content_len);
  // Colour the line, not its newline.
  const bool newline = !content.empty() && content.back() == '\n';
  if (newline) content.remove_suffix(1);
  out->text.append(start);
  if (line->origin == GIT_DIFF_LINE_ADDITION || line->origin == GIT_DIFF_LINE_DELETION ||
      line->origin == GIT_DIFF_LINE_CONTEXT) {
    out->text.push_back(line->origin);
  }
  out->text.append(content);
  out->text.append(end);
  if (newline) out->text.push_back('\n');
  return 0;
}

}  // namespace

std::string UnifiedDiff(const FileChange& change, bool color) {
  Git2().git_libgit2_init();
  git_patch* patch = nullptr;
  PatchText out;
  out.color = color;
  // A missing side is a null buffer, so an added or removed file reads
  // "--- /dev/null" / "+++ /dev/null" like git's own diffs.
  const std::string& old_path = change.status == 'R' ? change.old_path : change.path;
  if (Git2().git_patch_from_buffers(&patch, change.status == 'A' ? nullptr : change.old_text.data(),
                             change.old_text.size(), old_path.c_str(),
                             change.status == 'D' ? nullptr : change.new_text.data(),
                             change.new_text.size(), change.path.c_str(), nullptr) == 0) {
    Git2().git_patch_print(patch, &CollectLine, &out);
    Git2().git_patch_free(patch);
  }
  Git2().git_libgit2_shutdown();
  // A replaced (renamed) file: git's extended headers, so `git apply` moves it.
  if (change.status == 'R') {
    const size_t eol = out.text.find('\n');
    if (eol != std::string::npos) {
      out.text.insert(eol + 1, "rename from " + change.old_path + "\nrename to " + change.path + "\n");
    }
  }
  return out.text;
}

}  // namespace nemoc
