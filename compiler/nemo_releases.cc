#include "nemo_releases.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "file_reader.h"

namespace nemoc {

int ReleaseNumber(const std::string& s) {
  if (s.size() != 5 || s[2] != '.') return 0;
  for (size_t i : {0, 1, 3, 4}) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return 0;
  }
  return std::stoi(s.substr(0, 2)) * 100 + std::stoi(s.substr(3, 2));
}

bool NemoReleases::Load(const std::string& path, NemoReleases* out, std::string* err, FileReader* reader) {
  std::string text;
  if (!(reader != nullptr ? *reader : RealFiles()).Read(path, kMaxTableBytes, &text, err)) return false;
  const nlohmann::json table = nlohmann::json::parse(text, nullptr, false);
  if (table.is_discarded() || !table.is_object() || !table.contains("nemo1") || !table["nemo1"].is_object()) {
    *err = path + ": no \"nemo1\" object (what NeMo 1 runs on, by release)";
    return false;
  }
  const nlohmann::json& nemo1 = table["nemo1"];
  struct Field {
    const char* name;
    int* value;
  };
  for (const Field& f : {Field{"lastRelease", &out->last_nemo1},
                         Field{"scalePositionalEmbeddingSince", &out->nemo1_scale_positional_embedding_since}}) {
    const auto it = nemo1.find(f.name);
    *f.value = it != nemo1.end() && it->is_string() ? ReleaseNumber(it->get<std::string>()) : 0;
    if (*f.value == 0) {
      *err = path + ": nemo1." + f.name + " must be a release \"YY.MM\"";
      return false;
    }
  }
  return true;
}

}  // namespace nemoc
