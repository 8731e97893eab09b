#include "libgit2_api.h"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace nemoc {

const LibGit2Api& Git2() {
  static LibGit2Api api;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string soname = std::string("libgit2.so.") + LIBGIT2_SOVERSION;
    void* library = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* why = ::dlerror();
      failure = "cannot load " + soname + " (Debian package libgit2-" + LIBGIT2_SOVERSION +
                "), which diffs and --commit need: " + (why != nullptr ? why : "unknown error");
      return;
    }
#define NEMOC_LIBGIT2_LOAD(name)                                                      \
  if (failure.empty()) {                                                              \
    api.name = reinterpret_cast<decltype(&::name)>(::dlsym(library, #name));          \
    if (api.name == nullptr) failure = soname + " has no function " #name;            \
  }
    NEMOC_LIBGIT2_FUNCTIONS(NEMOC_LIBGIT2_LOAD)
#undef NEMOC_LIBGIT2_LOAD
    // The library stays loaded for the life of the process.
  });
  if (!failure.empty()) throw std::runtime_error(failure);
  return api;
}

}  // namespace nemoc
