#include "review_diff.h"

#include "cost.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "libgit2_api.h"

namespace nemoc {
namespace {

// "dir/<stem>-<hex>.yaml" -> "dir/<stem>", or "" when the name has no hash.
std::string HashedStem(const std::string& path) {
  static const std::string kSuffix = ".yaml";
  if (path.size() <= kSuffix.size() || path.compare(path.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
    return "";
  }
  const size_t end = path.size() - kSuffix.size();
  size_t start = end;
  while (start > 0 && std::isxdigit(static_cast<unsigned char>(path[start - 1])) &&
         !std::isupper(static_cast<unsigned char>(path[start - 1]))) {
    --start;
  }
  const size_t digits = end - start;
  if (digits < 6 || digits > 16 || start == 0 || path[start - 1] != '-') return "";
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && start - 1 <= slash + 1) return "";
  return path.substr(0, start - 1);
}

std::string Base(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "<kind>-<name>.yaml" as nemoc names object files (k8s.libsonnet file()).
std::string ObjectOf(const std::string& path) {
  std::string base = Base(path);
  if (base.size() > 5) base.resize(base.size() - 5);
  return base;
}

// The cells of a markdown table row ("| a | b \\| c |" -> {"a", "b \\| c"}).
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += "\\|";
      ++i;
    } else if (line[i] == '|') {
      const size_t b = cell.find_first_not_of(' ');
      const size_t e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

}  // namespace

// SUMMARY.md's facts: the rows of its facts table (header "| | |") and, for a
// target with overrides, its "Overrides for this target" table (field -> this
// target's value). D5: the first table of a target with overrides is the
// overrides table, whose three columns were read as two facts (five cells in
// the markdown) and the facts table after it was never read.
std::map<std::string, std::string> FactRows(const std::string& summary) {
  std::map<std::string, std::string> rows;
  std::istringstream in(summary);
  std::string line;
  enum { kNone, kFacts, kOverrides, kOther } table = kNone;
  bool header = false;
  while (std::getline(in, line)) {
    if (line.size() < 2 || line[0] != '|') {
      table = kNone;
      continue;
    }
    if (table == kNone) {  // a table's header row
      const auto cells = Cells(line);
      table = cells.size() == 2 && cells[0].empty() && cells[1].empty()                 ? kFacts
              : cells.size() == 3 && cells[0] == "Field" && cells[1] == "This target" ? kOverrides
                                                                                       : kOther;
      header = true;
      continue;
    }
    if (header && line.rfind("|---", 0) == 0) {
      header = false;
      continue;
    }
    const auto cells = Cells(line);
    if (table == kFacts && cells.size() == 2) rows[cells[0]] = cells[1];
    if (table == kOverrides && cells.size() == 3) rows["override " + cells[0]] = cells[1];
  }
  return rows;
}


std::vector<std::string> WorkloadFilePrefixes(const std::vector<std::string>& kinds) {
  std::vector<std::string> prefixes;
  for (const auto& key : kinds) {
    std::string kind = key.substr(key.rfind('/') + 1);
    for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    prefixes.push_back(kind + "-");
  }
  return prefixes;
}

bool IsWorkloadFile(const std::string& path, const std::vector<std::string>& prefixes) {
  const std::string base = Base(path);
  for (const auto& prefix : prefixes) {
    if (base.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

void PairRenamedFiles(std::vector<FileChange>* changes) {
  std::map<std::string, std::vector<size_t>> removed, added;
  for (size_t i = 0; i < changes->size(); ++i) {
    const FileChange& c = (*changes)[i];
    const std::string stem = HashedStem(c.path);
    if (stem.empty()) continue;
    if (c.status == 'D') removed[stem].push_back(i);
    if (c.status == 'A') added[stem].push_back(i);
  }
  std::vector<bool> drop(changes->size(), false);
  for (const auto& [stem, gone] : removed) {
    const auto it = added.find(stem);
    if (gone.size() != 1 || it == added.end() || it->second.size() != 1) continue;
    FileChange& fresh = (*changes)[it->second[0]];
    const FileChange& old = (*changes)[gone[0]];
    fresh.status = 'R';
    fresh.old_path = old.path;
    fresh.old_text = old.old_text;
    drop[gone[0]] = true;
  }
  std::vector<FileChange> kept;
  for (size_t i = 0; i < changes->size(); ++i) {
    if (!drop[i]) kept.push_back(std::move((*changes)[i]));
  }
  *changes = std::move(kept);
}

LineCounts CountLines(const FileChange& change) {
  LineCounts counts;
  Git2().git_libgit2_init();
  git_patch* patch = nullptr;
  if (Git2().git_patch_from_buffers(&patch, change.status == 'A' ? nullptr : change.old_text.data(), change.old_text.size(),
                             nullptr, change.status == 'D' ? nullptr : change.new_text.data(),
                             change.new_text.size(), nullptr, nullptr) == 0) {
    size_t context = 0, additions = 0, deletions = 0;
    Git2().git_patch_line_stats(&context, &additions, &deletions, patch);
    counts.added = static_cast<int>(additions);
    counts.removed = static_cast<int>(deletions);
    Git2().git_patch_free(patch);
  }
  Git2().git_libgit2_shutdown();
  return counts;
}

std::string RenderStat(const std::vector<FileChange>& changes) {
  if (changes.empty()) return "";
  std::vector<std::pair<std::string, LineCounts>> rows;
  size_t width = 0, count_width = 1;
  int total_added = 0, total_removed = 0, widest = 0;
  for (const auto& c : changes) {
    std::string name = c.path;
    if (c.status == 'R') {
      // git's "dir/{old => new}" for a rename within one directory.
      const size_t slash = c.path.rfind('/');
      const std::string dir = slash == std::string::npos ? "" : c.path.substr(0, slash + 1);
      name = c.old_path.rfind(dir, 0) == 0 ? dir + "{" + c.old_path.substr(dir.size()) + " => " + Base(c.path) + "}"
                                            : c.old_path + " => " + c.path;
    }
    const LineCounts n = CountLines(c);
    rows.emplace_back(name, n);
    width = std::max(width, name.size());
    count_width = std::max(count_width, std::to_string(n.added + n.removed).size());
    total_added += n.added;
    total_removed += n.removed;
    widest = std::max(widest, n.added + n.removed);
  }
  std::string out;
  for (const auto& [name, n] : rows) {
    // At most 40 marks per row, scaled like git's.
    const int total = n.added + n.removed;
    const int scale = widest > 40 ? widest : 40;
    const int plus = total == 0 ? 0 : std::max(n.added > 0 ? 1 : 0, n.added * 40 / scale);
    const int minus = total == 0 ? 0 : std::max(n.removed > 0 ? 1 : 0, n.removed * 40 / scale);
    const std::string count = std::to_string(total);
    out += " " + name + std::string(width - name.size(), ' ') + " | " + std::string(count_width - count.size(), ' ') +
           count + " " + std::string(plus, '+') + std::string(minus, '-') + "\n";
  }
  const auto part = [](int n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  out += " " + part(static_cast<int>(changes.size()), "file changed", "files changed");
  if (total_added > 0) out += ", " + part(total_added, "insertion(+)", "insertions(+)");
  if (total_removed > 0) out += ", " + part(total_removed, "deletion(-)", "deletions(-)");
  return out + "\n";
}

std::string TreeOf(const std::string& path, const std::string& out_dir) {
  size_t at = !out_dir.empty() && path.rfind(out_dir, 0) == 0 ? out_dir.size() : 0;
  while (at < path.size() && path[at] == '/') ++at;
  const size_t first = path.find('/', at);
  if (first == std::string::npos) return path.substr(0, path.rfind('/') == std::string::npos ? 0 : path.rfind('/'));
  const size_t second = path.find('/', first + 1);
  return path.substr(0, second == std::string::npos ? first : second);
}

nlohmann::json ChangeJson(const FileChange& change) {
  const LineCounts n = CountLines(change);
  nlohmann::json j = {{"status", std::string(1, change.status)}, {"path", change.path}};
  if (change.status == 'R') j["oldPath"] = change.old_path;
  j["added"] = n.added;
  j["removed"] = n.removed;
  return j;
}

nlohmann::json ChangedFacts(const std::string& old_summary, const std::string& new_summary) {
  const auto before = FactRows(old_summary);
  const auto after = FactRows(new_summary);
  nlohmann::json facts = nlohmann::json::array();
  std::vector<std::string> keys;
  for (const auto& [k, v] : after) keys.push_back(k);
  for (const auto& [k, v] : before) {
    if (!after.count(k)) keys.push_back(k);
  }
  std::sort(keys.begin(), keys.end());
  for (const auto& key : keys) {
    const auto b = before.find(key);
    const auto a = after.find(key);
    const std::string old_value = b == before.end() ? "" : b->second;
    const std::string new_value = a == after.end() ? "" : a->second;
    if (old_value != new_value) facts.push_back({{"fact", key}, {"before", old_value}, {"after", new_value}});
  }
  return facts;
}

std::string RenderMarkdown(const std::vector<FileChange>& changes, const std::vector<std::string>& targets,
                           const std::vector<std::string>& workload_prefixes) {
  std::string out;
  if (changes.empty()) return "No changes: the trees on disk are what the specs make.\n";
  for (const auto& target : targets) {
    const std::string prefix = target + "/";
    std::vector<const FileChange*> mine;
    for (const auto& c : changes) {
      if (c.path.rfind(prefix, 0) == 0) mine.push_back(&c);
    }
    if (mine.empty()) continue;
    std::string heading = target;
    for (size_t at = heading.find("//"); at != std::string::npos; at = heading.find("//")) heading.erase(at, 1);
    std::string body;
    // Stage directories (and gitops/) with their changed objects.
    std::map<std::string, std::vector<std::string>> stages;
    std::string old_summary, new_summary;
    bool replaced_workload = false;
    for (const FileChange* c : mine) {
      const std::string rel = c->path.substr(prefix.size());
      if (rel == "SUMMARY.md") {
        old_summary = c->old_text;
        new_summary = c->new_text;
        continue;
      }
      const size_t slash = rel.find('/');
      if (slash == std::string::npos) continue;  // the build manifest, the root kustomization
      const std::string stage = rel.substr(0, slash);
      if (Base(rel) == "kustomization.yaml") continue;  // follows the objects it lists
      std::string line;
      switch (c->status) {
        case 'R':
          line = "`" + ObjectOf(c->old_path) + "` → `" + ObjectOf(c->path) + "` (replaced)";
          if (IsWorkloadFile(c->path, workload_prefixes) && stage != "gitops") replaced_workload = true;
          break;
        case 'A': line = "`" + ObjectOf(c->path) + "` added"; break;
        case 'D':
          line = "`" + ObjectOf(c->path) + "` removed";
          if (IsWorkloadFile(c->path, workload_prefixes) && stage != "gitops") replaced_workload = true;
          break;
        default: line = "`" + ObjectOf(c->path) + "` changed"; break;
      }
      const LineCounts n = CountLines(*c);
      line += " (+" + std::to_string(n.added) + " −" + std::to_string(n.removed) + ")";
      stages[stage].push_back(line);
    }
    if (!stages.empty()) {
      body += "| stage | objects |\n|---|---|\n";
      for (const auto& [stage, lines] : stages) {
        std::string joined;
        for (const auto& l : lines) joined += (joined.empty() ? "" : "<br>") + l;
        body += "| `" + stage + "` | " + joined + " |\n";
      }
      body += "\n";
    }
    const nlohmann::json facts = ChangedFacts(old_summary, new_summary);
    if (!facts.empty()) {
      body += "| fact | before | after |\n|---|---|---|\n";
      for (const auto& f : facts) {
        const std::string before = f["before"].get<std::string>(), after = f["after"].get<std::string>();
        // Issue #46 item 3: a cost row says what the change costs.
        const std::string fact = f["fact"].get<std::string>();
        const std::string delta = fact == CostRowName("train") || fact == CostRowName("pretrain")
                                      ? CostDelta(before, after) : std::string();
        body += "| " + fact + " | " + (before.empty() ? "—" : before) + " | " + (after.empty() ? "—" : after) +
                (delta.empty() ? "" : "<br>" + delta) + " |\n";
      }
      body += "\n";
    }
    if (replaced_workload) {
      body += "**A workload is replaced or removed:** the GitOps engine deletes the old one (a running "
              "training stops; a replaced one runs again under its new name).\n\n";
    }
    if (!body.empty()) out += "### `" + heading + "`\n\n" + body;
  }
  return out;
}

}  // namespace nemoc
