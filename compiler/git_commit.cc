#include "git_commit.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "libgit2_api.h"

#include "secret_scanner.h"
#include "tree_writer.h"

namespace nemoc {

namespace fs = std::filesystem;

namespace {

std::string LastGitError() {
  const git_error* e = Git2().git_error_last();
  return e != nullptr && e->message != nullptr ? e->message : "unknown libgit2 error";
}

// libgit2 handles freed on scope exit (Free: the LibGit2Api member).
template <typename T, void (*LibGit2Api::*Free)(T*)>
struct Owned {
  T* ptr = nullptr;
  ~Owned() {
    if (ptr != nullptr) (Git2().*Free)(ptr);
  }
  T** out() { return &ptr; }
  T* get() const { return ptr; }
};
using Repo = Owned<git_repository, &LibGit2Api::git_repository_free>;
using Ref = Owned<git_reference, &LibGit2Api::git_reference_free>;
using Index = Owned<git_index, &LibGit2Api::git_index_free>;
using CommitHandle = Owned<git_commit, &LibGit2Api::git_commit_free>;
using Tree = Owned<git_tree, &LibGit2Api::git_tree_free>;
using TreeEntry = Owned<git_tree_entry, &LibGit2Api::git_tree_entry_free>;
using Signature = Owned<git_signature, &LibGit2Api::git_signature_free>;
using StatusList = Owned<git_status_list, &LibGit2Api::git_status_list_free>;
using Config = Owned<git_config, &LibGit2Api::git_config_free>;

struct LibGit2 {
  LibGit2() { Git2().git_libgit2_init(); }
  ~LibGit2() { Git2().git_libgit2_shutdown(); }
};

// The object id of `path` (a directory) in `tree`, or zero when absent.
git_oid EntryId(git_tree* tree, const std::string& path) {
  git_oid id{};
  if (tree == nullptr) return id;
  TreeEntry entry;
  if (Git2().git_tree_entry_bypath(entry.out(), tree, path.c_str()) == 0) id = *Git2().git_tree_entry_id(entry.get());
  return id;
}

}  // namespace

struct GitCommitter::Impl {
  LibGit2 lib;
  Repo repo;
  std::string ref_name;  // refs/heads/<branch>
  CommitOptions options;
  std::vector<CommitEntry> entries;
  std::vector<std::string> relative;  // entry dirs relative to the work tree
  // D6: spec files and their .nemoc/ files, relative to the work tree.
  std::vector<std::string> sources;
  // Those of them this build writes (CommitOptions::generated): rel -> bytes.
  std::map<std::string, std::string> generated;
  // Set by Prepare.
  CommitHandle parent;
  Tree parent_tree;
  git_oid tree_id{};
  Signature signature;
  bool prepared = false;
};

GitCommitter::~GitCommitter() = default;

std::string GitCommitter::git_dir() const { return Git2().git_repository_path(impl_->repo.get()); }
std::string GitCommitter::common_dir() const { return Git2().git_repository_commondir(impl_->repo.get()); }

std::unique_ptr<GitCommitter> GitCommitter::Open(const CommitOptions& options,
                                                 std::vector<CommitEntry> entries,
                                                 Diagnostics* diags) {
  std::unique_ptr<GitCommitter> c(new GitCommitter());
  c->impl_ = std::make_unique<Impl>();
  Impl& impl = *c->impl_;
  impl.options = options;
  const std::string start = options.repo_dir.empty() ? "." : options.repo_dir;
  const unsigned flags = options.repo_dir.empty() ? 0 : GIT_REPOSITORY_OPEN_NO_SEARCH;
  if (Git2().git_repository_open_ext(impl.repo.out(), start.c_str(), flags, nullptr) != 0) {
    diags->Error("git.no-repository",
                 (options.repo_dir.empty() ? std::string("the working directory")
                                           : "--repo " + options.repo_dir) +
                     " is not in a Git repository: " + LastGitError(),
                 {}, "run nemoc inside a clone, or pass --repo DIR");
    return nullptr;
  }
  const char* workdir = Git2().git_repository_workdir(impl.repo.get());
  if (workdir == nullptr) {
    diags->Error("git.bare", "the repository has no work tree (bare repositories are not supported)");
    return nullptr;
  }
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(workdir, ec);

  // The branch: --branch, else the one HEAD points at (possibly unborn).
  std::string head_target;
  {
    Ref head;
    if (Git2().git_reference_lookup(head.out(), impl.repo.get(), "HEAD") == 0 &&
        Git2().git_reference_type(head.get()) == GIT_REFERENCE_SYMBOLIC) {
      head_target = Git2().git_reference_symbolic_target(head.get());
    }
  }
  if (options.branch.empty()) {
    if (head_target.empty()) {
      diags->Error("git.detached-head", "HEAD is detached: there is no branch to commit to", {},
                   "pass --branch NAME");
      return nullptr;
    }
    impl.ref_name = head_target;
  } else {
    impl.ref_name = "refs/heads/" + options.branch;
    int valid = 0;
    // git's own rules for a branch name (refs.c check_refname_format plus
    // strbuf_check_branch_ref): not "HEAD", not starting with '-', not "@",
    // and a short name, not a full ref ("refs/heads/x" would make
    // refs/heads/refs/heads/x). E13.
    const std::string& b = options.branch;
    const bool git_refuses = b == "HEAD" || b == "@" || b[0] == '-' || b.rfind("refs/", 0) == 0;
    if (git_refuses || Git2().git_reference_name_is_valid(&valid, impl.ref_name.c_str()) != 0 || !valid) {
      diags->Error("usage.branch", "--branch " + options.branch + " is not a valid branch name", {},
                   "name a branch as git branch would accept it, e.g. --branch gitops/" +
                       std::string("nemoc"));
      return nullptr;
    }
  }
  c->checked_out_ = impl.ref_name == head_target;
  if (!options.branch.empty() && !c->checked_out_) {
    // E26: names that mean something else to git, and a branch whose work
    // tree is somewhere else. Refused before anything is written.
    const std::string& b = options.branch;
    bool pseudo = b.size() > 4 && b.compare(b.size() - 4, 4, "HEAD") == 0;
    for (char ch : b) pseudo = pseudo && ((ch >= 'A' && ch <= 'Z') || ch == '_');
    std::string shadowed;
    for (const char* prefix : {"refs/remotes/", "refs/tags/"}) {
      git_oid ignored;
      if (shadowed.empty() && Git2().git_reference_name_to_id(&ignored, impl.repo.get(), (prefix + b).c_str()) == 0) {
        shadowed = prefix + b;
      }
    }
    git_strarray remotes{};
    if (shadowed.empty() && Git2().git_remote_list(&remotes, impl.repo.get()) == 0) {
      for (size_t i = 0; i < remotes.count; ++i) {
        const std::string remote = remotes.strings[i];
        if (b.rfind(remote + "/", 0) == 0) shadowed = "remote " + remote;
      }
    }
    Git2().git_strarray_dispose(&remotes);
    if (pseudo || !shadowed.empty()) {
      diags->Error("usage.branch",
                   "--branch " + b + " would make a branch git confuses with " +
                       (pseudo ? "its pseudo-ref " + b + " (as FETCH_HEAD, ORIG_HEAD)" : shadowed),
                   {}, "name a branch of its own, e.g. --branch gitops/nemoc");
      return nullptr;
    }
    Ref existing;
    if (Git2().git_reference_lookup(existing.out(), impl.repo.get(), impl.ref_name.c_str()) == 0 &&
        Git2().git_branch_is_checked_out(existing.get()) == 1) {
      diags->Error("git.branch-checked-out",
                   "--branch " + b + " is checked out in another worktree; advancing it would leave "
                   "that worktree's index and files behind its branch",
                   {}, "run nemoc build --commit in that worktree, or name another branch");
      return nullptr;
    }
  }

  for (const auto& entry : entries) {
    const fs::path dir = fs::weakly_canonical(fs::absolute(entry.dir, ec), ec);
    const fs::path rel = dir.lexically_relative(root);
    const std::string rel_text = rel.generic_string();
    if (ec || rel.empty() || rel_text == "." || rel_text.rfind("..", 0) == 0) {
      diags->Error("git.outside-repository",
                   entry.dir + " is not inside the repository's work tree " + root.string(), {},
                   "pass --out DIR inside the repository, or --repo DIR");
      continue;
    }
    impl.relative.push_back(rel_text);
  }
  if (diags->has_errors()) return nullptr;
  impl.entries = std::move(entries);
  // D6: each spec and the files of the .nemoc/ directory beside it.
  std::set<std::string> sources;
  auto add_source = [&](const fs::path& file) {
    const fs::path canonical = fs::weakly_canonical(fs::absolute(file, ec), ec);
    const std::string rel = canonical.lexically_relative(root).generic_string();
    if (ec || rel.empty() || rel == "." || rel.rfind("..", 0) == 0) return;
    if (!fs::is_regular_file(fs::symlink_status(canonical, ec))) return;
    sources.insert(rel);
  };
  for (const auto& spec : options.sources) {
    add_source(spec);
    const fs::path data = fs::absolute(spec, ec).parent_path() / ".nemoc";
    if (fs::is_directory(fs::symlink_status(data, ec))) {
      for (const auto& file : fs::directory_iterator(data, ec)) add_source(file.path());
    }
  }
  // Files written beside the specs by this build: committed with the bytes
  // written (they may not be on disk yet when the tree is made).
  for (const auto& [path, bytes] : options.generated) {
    const fs::path parent = fs::weakly_canonical(fs::absolute(fs::path(path).parent_path(), ec), ec);
    const std::string rel = (parent / fs::path(path).filename()).lexically_relative(root).generic_string();
    if (ec || rel.empty() || rel.rfind("..", 0) == 0) continue;
    sources.insert(rel);
    impl.generated[rel] = bytes;
  }
  impl.sources.assign(sources.begin(), sources.end());
  return c;
}

bool GitCommitter::CheckClean(Diagnostics* diags) {
  if (!checked_out_) return true;
  Impl& impl = *impl_;
  std::vector<std::string> specs = impl.relative;
  std::vector<char*> pointers;
  for (auto& s : specs) pointers.push_back(s.data());
  // GIT_STATUS_OPTIONS_INIT is {GIT_STATUS_OPTIONS_VERSION}, the rest zero
  // (git2/status.h); written out, since clang's -Wmissing-field-initializers
  // flags the macro's brace list in every sanitizer build.
  git_status_options options{};
  options.version = GIT_STATUS_OPTIONS_VERSION;
  options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  options.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
  options.pathspec = {pointers.data(), pointers.size()};
  StatusList list;
  if (Git2().git_status_list_new(list.out(), impl.repo.get(), &options) != 0) {
    diags->Error("git.status", "cannot read the repository status: " + LastGitError());
    return false;
  }
  // What nemoc is about to leave in the work tree, by repository path. A
  // file that already holds exactly that (an earlier `nemoc build` without
  // --commit wrote it) or is absent where nemoc writes nothing is no edit of
  // the user's: the commit records it and the index follows (C12).
  std::map<std::string, std::string> intended;
  for (size_t i = 0; i < impl.entries.size(); ++i) {
    if (impl.entries[i].tree == nullptr) continue;
    const std::string& rel = impl.relative[i];
    intended[rel + "/" + kManifestFileName] = ManifestContent(*impl.entries[i].tree);
    for (const auto& [path, bytes] : *impl.entries[i].tree) intended[rel + "/" + path] = bytes;
  }
  const std::string workdir = Git2().git_repository_workdir(impl.repo.get());
  auto as_nemoc_leaves_it = [&](const std::string& path) {
    std::error_code ec;
    const fs::path full = fs::path(workdir) / path;
    auto it = intended.find(path);
    if (it == intended.end()) return !fs::exists(fs::symlink_status(full, ec));
    if (!fs::is_regular_file(fs::symlink_status(full, ec))) return false;
    std::FILE* f = std::fopen(full.c_str(), "rb");
    if (f == nullptr) return false;
    std::string bytes;
    char buffer[65536];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) bytes.append(buffer, n);
    std::fclose(f);
    return bytes == it->second;
  };
  const size_t count = Git2().git_status_list_entrycount(list.get());
  size_t refused = 0;
  for (size_t i = 0; i < count; ++i) {
    const git_status_entry* e = Git2().git_status_byindex(list.get(), i);
    const git_diff_delta* delta = e->index_to_workdir != nullptr ? e->index_to_workdir : e->head_to_index;
    if (delta == nullptr) continue;
    const char* path = delta->new_file.path != nullptr ? delta->new_file.path : delta->old_file.path;
    if (as_nemoc_leaves_it(path)) continue;
    ++refused;
    const char* what = (e->status & GIT_STATUS_WT_NEW) ? "untracked"
                       : (e->status & GIT_STATUS_WT_DELETED) ? "deleted, not committed"
                       : (e->status & (GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED |
                                       GIT_STATUS_INDEX_DELETED | GIT_STATUS_INDEX_RENAMED))
                           ? "staged, not committed"
                           : "modified, not committed";
    diags->Error("git.uncommitted", std::string(path) + ": " + what, {},
                 "nemoc owns this directory: commit or discard the edit (git checkout -- PATH) "
                 "before nemoc build --commit");
  }
  return refused == 0;
}

bool GitCommitter::Prepare(Diagnostics* diags) {
  Impl& impl = *impl_;
  git_repository* repo = impl.repo.get();

  // Everything the commit step needs is checked here, before any file is
  // written (E12): Git's own locks and the author.
  const std::string git_dir = Git2().git_repository_path(repo);
  std::error_code ec;
  for (const std::string& lock : {impl.ref_name + ".lock", std::string(checked_out_ ? "index.lock" : "")}) {
    if (lock.empty() || !fs::exists(fs::path(git_dir) / lock, ec)) continue;
    diags->Error("git.locked",
                 (fs::path(git_dir) / lock).string() +
                     " exists: another git process is running, or one crashed and left it",
                 {}, "wait for the other git command to finish; if none runs, remove the file");
  }
  // What `git commit` would do that libgit2 does not (E14): sign the commit
  // (commit.gpgsign) and run the commit hooks (core.hooksPath, else
  // <git dir>/hooks; pre-commit, prepare-commit-msg, commit-msg). A commit
  // that silently skipped them would pass where the user's own check or
  // signature policy expects it to; refuse before anything is written.
  Config config;
  if (Git2().git_repository_config_snapshot(config.out(), repo) == 0) {
    int sign = 0;
    if (Git2().git_config_get_bool(&sign, config.get(), "commit.gpgsign") == 0 && sign != 0) {
      diags->Error("git.signing",
                   "the repository asks for signed commits (commit.gpgsign = true); nemoc commits "
                   "with libgit2, which cannot sign",
                   {},
                   "run nemoc build without --commit and commit with git commit -S, or set "
                   "commit.gpgsign false for this repository");
    }
    fs::path hooks = fs::path(git_dir) / "hooks";
    git_buf configured = GIT_BUF_INIT;
    if (Git2().git_config_get_path(&configured, config.get(), "core.hooksPath") == 0) {
      fs::path p(configured.ptr);
      const char* workdir = Git2().git_repository_workdir(repo);
      hooks = p.is_absolute() || workdir == nullptr ? p : fs::path(workdir) / p;
    }
    Git2().git_buf_dispose(&configured);
    if (!impl.options.no_verify) {
      for (const char* hook : {"pre-commit", "prepare-commit-msg", "commit-msg"}) {
        const fs::path file = hooks / hook;
        const auto perms = fs::status(file, ec).permissions();
        if (ec || !fs::is_regular_file(file, ec) ||
            (perms & (fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec)) ==
                fs::perms::none) {
          ec.clear();
          continue;
        }
        diags->Error("git.hooks",
                     "the repository has a " + std::string(hook) + " hook (" + file.string() +
                         "); nemoc commits with libgit2, which runs no hooks",
                     {},
                     "run nemoc build without --commit and commit with git, or pass --no-verify to "
                     "commit without the hooks");
      }
    }
  } else {
    diags->Error("git.read", "cannot read the repository's configuration: " + LastGitError());
  }
  if (diags->has_errors()) return false;
  // Git's author line is `name <email> time zone` (git/Documentation/
  // technical/signature-format; libgit2 src/libgit2/signature.c): a line break
  // in the name would end the header early, '<'/'>' would move the e-mail.
  // libgit2's git_signature_now accepts a '\n' in the name (only the commit's
  // parse fails), so it is refused here, before any file is written (E26).
  auto bad = [](const std::string& s, bool email) {
    return std::any_of(s.begin(), s.end(), [email](char ch) {
      const unsigned char c = static_cast<unsigned char>(ch);
      return c < 0x20 || c == 0x7f || ch == '<' || ch == '>' || (email && ch == ' ');
    });
  };
  for (const auto& [flag, value] : {std::pair<std::string, std::string>{"--author-name", impl.options.author_name},
                                    {"--author-email", impl.options.author_email}}) {
    // A commit object is pushed and kept forever: a credential pasted as the
    // author (E23: --author-name nvapi-...) is refused, unquoted.
    if (const auto found = FindSecrets(value); !found.empty()) {
      diags->Error("git.author",
                   flag + ": looks like a " + found.front().kind +
                       "; a commit's author is pushed with it, so it is refused (not shown here)",
                   {}, "pass a plain name and e-mail; treat the value as leaked and rotate it");
      continue;
    }
    if (bad(value, flag == "--author-email")) {
      diags->Error("git.author",
                   flag + ": holds a line break, a control character" +
                       (flag == "--author-email" ? std::string(", a space") : std::string()) +
                       " or '<'/'>', which a Git author line cannot carry",
                   {}, "pass a plain name and e-mail, e.g. --author-name 'Release Bot' --author-email bot@example.com");
    }
  }
  if (diags->has_errors()) return false;
  if (!impl.options.author_name.empty() && !impl.options.author_email.empty()) {
    if (Git2().git_signature_now(impl.signature.out(), impl.options.author_name.c_str(),
                          impl.options.author_email.c_str()) != 0) {
      diags->Error("git.author", "invalid commit author: " + LastGitError());
      return false;
    }
  } else {
    Signature fallback;
    int rc = Git2().git_signature_default(fallback.out(), repo);
    if (rc == 0) {
      const std::string name = impl.options.author_name.empty() ? fallback.get()->name : impl.options.author_name;
      const std::string email = impl.options.author_email.empty() ? fallback.get()->email : impl.options.author_email;
      rc = Git2().git_signature_now(impl.signature.out(), name.c_str(), email.c_str());
    }
    if (rc != 0) {
      diags->Error("git.author", "no commit author: " + LastGitError(), {},
                   "set user.name and user.email in git config, or pass --author-name and "
                   "--author-email");
      return false;
    }
  }

  // Parent: the branch's tip; a new branch starts from HEAD (if born).
  CommitHandle& parent = impl.parent;
  git_oid tip;
  if (Git2().git_reference_name_to_id(&tip, repo, impl.ref_name.c_str()) == 0 ||
      Git2().git_reference_name_to_id(&tip, repo, "HEAD") == 0) {
    if (Git2().git_commit_lookup(parent.out(), repo, &tip) != 0) {
      diags->Error("git.read", "cannot read commit " + std::string(Git2().git_oid_tostr_s(&tip)) + ": " + LastGitError());
      return false;
    }
  }
  Tree& parent_tree = impl.parent_tree;
  if (parent.get() != nullptr && Git2().git_commit_tree(parent_tree.out(), parent.get()) != 0) {
    diags->Error("git.read", "cannot read the parent tree: " + LastGitError());
    return false;
  }

  // The parent's tree with exactly the entries' directories replaced.
  Index index;
  if (Git2().git_index_new(index.out()) != 0 ||
      (parent_tree.get() != nullptr && Git2().git_index_read_tree(index.get(), parent_tree.get()) != 0)) {
    diags->Error("git.index", "cannot build the commit's tree: " + LastGitError());
    return false;
  }
  for (size_t i = 0; i < impl.entries.size(); ++i) {
    const std::string& rel = impl.relative[i];
    Git2().git_index_remove_directory(index.get(), rel.c_str(), 0);
    if (impl.entries[i].tree == nullptr) continue;
    FileTree files = *impl.entries[i].tree;
    files[kManifestFileName] = ManifestContent(*impl.entries[i].tree);
    for (const auto& [path, bytes] : files) {
      // Blobs go to the object database; the in-memory index only points at them.
      const std::string full = rel + "/" + path;
      git_index_entry entry{};
      entry.mode = GIT_FILEMODE_BLOB;
      entry.path = full.c_str();
      if (Git2().git_blob_create_from_buffer(&entry.id, repo, bytes.data(), bytes.size()) != 0 ||
          Git2().git_index_add(index.get(), &entry) != 0) {
        diags->Error("git.index", "cannot stage " + full + ": " + LastGitError());
        return false;
      }
    }
  }
  // The specs as they are on disk (D6).
  const char* workdir = Git2().git_repository_workdir(repo);
  for (const auto& rel : impl.sources) {
    std::ifstream in;
    std::string bytes;
    auto generated = impl.generated.find(rel);
    if (generated != impl.generated.end()) {
      bytes = generated->second;
    } else {
      in.open(fs::path(workdir) / rel, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    git_index_entry entry{};
    entry.mode = GIT_FILEMODE_BLOB;
    entry.path = rel.c_str();
    if (generated == impl.generated.end() && !in.good() && !in.eof()) {
      diags->Error("git.read", "cannot read " + rel + " to commit it");
      return false;
    }
    if (Git2().git_blob_create_from_buffer(&entry.id, repo, bytes.data(), bytes.size()) != 0 ||
        Git2().git_index_add(index.get(), &entry) != 0) {
      diags->Error("git.index", "cannot stage " + rel + ": " + LastGitError());
      return false;
    }
  }
  if (Git2().git_index_write_tree_to(&impl.tree_id, index.get(), repo) != 0) {
    diags->Error("git.write", "cannot write the tree: " + LastGitError());
    return false;
  }
  impl.prepared = true;
  return true;
}

bool GitCommitter::Commit(bool* committed, std::string* summary, Diagnostics* diags) {
  Impl& impl = *impl_;
  *committed = false;
  if (!impl.prepared && !Prepare(diags)) return false;
  git_repository* repo = impl.repo.get();
  git_commit* parent_commit = impl.parent.get();
  git_tree* parent_tree = impl.parent_tree.get();
  const git_oid tree_id = impl.tree_id;
  if (parent_tree != nullptr && Git2().git_oid_equal(&tree_id, Git2().git_tree_id(parent_tree))) {
    *summary = "nothing to commit (the trees in Git are up to date)";
    return true;
  }
  Tree tree;
  if (Git2().git_tree_lookup(tree.out(), repo, &tree_id) != 0) {
    diags->Error("git.read", "cannot read the new tree: " + LastGitError());
    return false;
  }

  // The message names the targets whose directories changed.
  std::vector<std::string> changed, removed;
  for (size_t i = 0; i < impl.entries.size(); ++i) {
    const git_oid before = EntryId(parent_tree, impl.relative[i]);
    const git_oid after = EntryId(tree.get(), impl.relative[i]);
    if (Git2().git_oid_equal(&before, &after)) continue;
    (impl.entries[i].tree == nullptr ? removed : changed).push_back(impl.entries[i].label);
  }
  std::vector<std::string> inputs;  // D6: specs (and .nemoc/ files) that changed
  for (const auto& rel : impl.sources) {
    const git_oid before = EntryId(parent_tree, rel);
    const git_oid after = EntryId(tree.get(), rel);
    if (!Git2().git_oid_equal(&before, &after)) inputs.push_back(rel);
  }
  std::string subject;
  for (const auto& label : changed) subject += (subject.empty() ? "" : ", ") + label;
  for (const auto& label : removed) subject += (subject.empty() ? "remove " : ", remove ") + label;
  if (subject.empty()) subject = "record " + (inputs.size() == 1 ? inputs.front() : std::to_string(inputs.size()) + " spec files");
  std::string message = "nemoc build: " + subject + "\n\n";
  for (const auto& label : changed) message += "- " + label + ": regenerated\n";
  for (const auto& label : removed) message += "- " + label + ": no longer a target, removed\n";
  for (const auto& rel : inputs) message += "- " + rel + ": the spec as built\n";

  git_signature* signature = impl.signature.get();
  const git_commit* parents[] = {parent_commit};
  git_oid commit_id;
  // The commit object only; the branch moves last (below).
  if (Git2().git_commit_create(&commit_id, repo, nullptr, signature, signature, "UTF-8", message.c_str(),
                        tree.get(), parent_commit != nullptr ? 1 : 0, parents) != 0) {
    diags->Error("git.commit", "cannot commit: " + LastGitError());
    return false;
  }

  // The index before the branch (E17). A process killed between the two
  // leaves the index holding nemoc's trees on the old branch tip: the user's
  // next `git commit` records nemoc's trees, and the next `nemoc build
  // --commit` finds them staged exactly as it would write them and commits.
  // In the other order, a kill left the branch advanced over a stale index,
  // and the user's next `git commit` silently reverted nemoc's commit. (Git
  // itself stages the index before it moves the branch: builtin/commit.c
  // prepare_index() runs before update_ref().)
  // Only the entries' directories are touched.
  if (checked_out_) {
    // Read the index now, under nemoc's repository lock (cmd_build.cc), not
    // as libgit2 cached it when the repository was opened: the write below
    // must not undo another process's staged changes (E2).
    Index real;
    bool ok = Git2().git_repository_index(real.out(), repo) == 0 && Git2().git_index_read(real.get(), /*force=*/1) == 0;
    for (size_t i = 0; ok && i < impl.entries.size(); ++i) {
      Git2().git_index_remove_directory(real.get(), impl.relative[i].c_str(), 0);
      if (impl.entries[i].tree == nullptr) continue;
      std::vector<std::string> paths = {impl.relative[i] + "/" + kManifestFileName};
      for (const auto& [path, _] : *impl.entries[i].tree) paths.push_back(impl.relative[i] + "/" + path);
      for (const auto& path : paths) ok = ok && Git2().git_index_add_bypath(real.get(), path.c_str()) == 0;
    }
    for (const auto& rel : impl.sources) ok = ok && Git2().git_index_add_bypath(real.get(), rel.c_str()) == 0;
    if (!ok || Git2().git_index_write(real.get()) != 0) {
      diags->Error("git.index", "cannot update the index (nothing was committed): " + LastGitError());
      return false;
    }
  }
  if (FaultInjectionEnabled(kFaultBetweenIndexAndRef)) std::abort();

  // The branch, only if it still points where Prepare found it (as
  // git_commit_create's own update does: a compare-and-swap on the ref).
  const std::string first_line = message.substr(0, message.find('\n'));
  const std::string reflog = std::string(parent_commit != nullptr ? "commit: " : "commit (initial): ") + first_line;
  Ref moved;
  git_oid current;
  const bool exists = Git2().git_reference_name_to_id(&current, repo, impl.ref_name.c_str()) == 0;
  const int rc = exists ? Git2().git_reference_create_matching(moved.out(), repo, impl.ref_name.c_str(), &commit_id,
                                                        /*force=*/1,
                                                        parent_commit != nullptr ? Git2().git_commit_id(parent_commit)
                                                                                 : &current,
                                                        reflog.c_str())
                        : Git2().git_reference_create(moved.out(), repo, impl.ref_name.c_str(), &commit_id,
                                               /*force=*/0, reflog.c_str());
  if (rc != 0) {
    diags->Error("git.commit",
                 "cannot move " + impl.ref_name + " to the new commit: " + LastGitError() +
                     (checked_out_ ? "; the index already holds the new trees" : ""),
                 {}, "run nemoc build --commit again");
    return false;
  }
  *committed = true;
  char short_id[8] = {};
  Git2().git_oid_tostr(short_id, sizeof(short_id), &commit_id);
  *summary = std::string("committed ") + short_id + " on " +
             impl.ref_name.substr(std::string("refs/heads/").size()) + ": " + subject;
  return true;
}

}  // namespace nemoc
