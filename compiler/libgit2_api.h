// libgit2, loaded when a command first needs it. Only diffs (check and diff
// on drift, review) and `build --commit` use it, and linking it made every
// nemoc process map libgit2 and its fourteen libraries (Kerberos, mbedTLS,
// OpenSSL's libcrypto, libssh2, ...): ~8 ms of a no-op build's ~20 ms start
// on this project's machines (issue #47, bench/RESULTS.md). The functions keep
// libgit2's names and types: Git2().git_patch_free(patch).
#ifndef NEMOC_LIBGIT2_API_H_
#define NEMOC_LIBGIT2_API_H_

#include <git2.h>

namespace nemoc {

// Every libgit2 function nemoc calls; a new one is added here.
#define NEMOC_LIBGIT2_FUNCTIONS(X) \
  X(git_blob_create_from_buffer) \
  X(git_branch_is_checked_out) \
  X(git_buf_dispose) \
  X(git_commit_create) \
  X(git_commit_free) \
  X(git_commit_id) \
  X(git_commit_lookup) \
  X(git_commit_tree) \
  X(git_config_free) \
  X(git_config_get_bool) \
  X(git_config_get_path) \
  X(git_error_last) \
  X(git_index_add) \
  X(git_index_add_bypath) \
  X(git_index_free) \
  X(git_index_new) \
  X(git_index_read) \
  X(git_index_read_tree) \
  X(git_index_remove_directory) \
  X(git_index_write) \
  X(git_index_write_tree_to) \
  X(git_libgit2_init) \
  X(git_libgit2_shutdown) \
  X(git_oid_equal) \
  X(git_oid_tostr) \
  X(git_oid_tostr_s) \
  X(git_patch_free) \
  X(git_patch_from_buffers) \
  X(git_patch_line_stats) \
  X(git_patch_print) \
  X(git_reference_create) \
  X(git_reference_create_matching) \
  X(git_reference_free) \
  X(git_reference_lookup) \
  X(git_reference_name_is_valid) \
  X(git_reference_name_to_id) \
  X(git_reference_symbolic_target) \
  X(git_reference_type) \
  X(git_remote_list) \
  X(git_repository_commondir) \
  X(git_repository_config_snapshot) \
  X(git_repository_free) \
  X(git_repository_index) \
  X(git_repository_open_ext) \
  X(git_repository_path) \
  X(git_repository_workdir) \
  X(git_signature_default) \
  X(git_signature_free) \
  X(git_signature_now) \
  X(git_status_byindex) \
  X(git_status_list_entrycount) \
  X(git_status_list_free) \
  X(git_status_list_new) \
  X(git_strarray_dispose) \
  X(git_tree_entry_bypath) \
  X(git_tree_entry_free) \
  X(git_tree_entry_id) \
  X(git_tree_free) \
  X(git_tree_id) \
  X(git_tree_lookup)

struct LibGit2Api {
#define NEMOC_LIBGIT2_POINTER(name) decltype(&::name) name = nullptr;
  NEMOC_LIBGIT2_FUNCTIONS(NEMOC_LIBGIT2_POINTER)
#undef NEMOC_LIBGIT2_POINTER
};

/// libgit2's functions, loaded (dlopen of libgit2.so.<LIBGIT2_SOVERSION>, the
/// library these headers belong to) on the first call. Throws
/// std::runtime_error naming the library and the Debian package when it
/// cannot be loaded.
const LibGit2Api& Git2();

}  // namespace nemoc

#endif  // NEMOC_LIBGIT2_API_H_
