#include "source_map.h"

#include <iterator>
#include <utility>
#include <vector>

namespace nemoc {

void SourceMap::SetValue(const std::string& pointer, SourcePos pos) {
  values_[pointer] = pos;
}

void SourceMap::SetKey(const std::string& pointer, SourcePos pos) {
  keys_[pointer] = pos;
}

void SourceMap::SetOverride(const std::string& pointer, Location origin) {
  overrides_[pointer] = std::move(origin);
}

bool PointerAtOrBelow(const std::string& pointer, const std::string& root) {
  return pointer.compare(0, root.size(), root) == 0 &&
         (pointer.size() == root.size() || pointer[root.size()] == '/');
}

namespace {

template <typename Map>
void EraseBelow(Map* map, const std::string& root) {
  for (auto it = map->begin(); it != map->end();) {
    it = PointerAtOrBelow(it->first, root) ? map->erase(it) : std::next(it);
  }
}

template <typename Map>
void GraftBelow(Map* map, const std::string& from, const std::string& to) {
  std::vector<std::pair<std::string, typename Map::mapped_type>> copied;
  for (const auto& [pointer, value] : *map) {
    if (PointerAtOrBelow(pointer, from)) copied.emplace_back(to + pointer.substr(from.size()), value);
  }
  for (auto& [pointer, value] : copied) (*map)[pointer] = std::move(value);
}

}  // namespace

void SourceMap::Erase(const std::string& pointer) {
  EraseBelow(&values_, pointer);
  EraseBelow(&keys_, pointer);
  EraseBelow(&overrides_, pointer);
}

void SourceMap::Graft(const std::string& from, const std::string& to) {
  GraftBelow(&values_, from, to);
  GraftBelow(&keys_, from, to);
  GraftBelow(&overrides_, from, to);
}

std::string SourceMap::PointerAt(int line, int column) const {
  std::string best;
  SourcePos best_pos{0, 0};
  for (const auto& [pointer, pos] : values_) {
    const bool before = pos.line < line || (pos.line == line && pos.column <= column);
    if (!before) continue;
    // The latest start wins; at one position the deeper pointer.
    if (pos.line > best_pos.line || (pos.line == best_pos.line && pos.column > best_pos.column) ||
        (pos.line == best_pos.line && pos.column == best_pos.column && pointer.size() > best.size())) {
      best = pointer;
      best_pos = pos;
    }
  }
  return best;
}

Location SourceMap::Locate(const std::string& pointer, bool prefer_key) const {
  Location loc = LocateUnlabelled(pointer, prefer_key);
  loc.pointer = pointer;
  return loc;
}

Location SourceMap::LocateUnlabelled(const std::string& pointer, bool prefer_key) const {
  if (!overrides_.empty()) {
    std::string p = pointer;
    while (true) {
      auto o = overrides_.find(p);
      if (o != overrides_.end()) return o->second;
      if (p.empty()) break;
      size_t slash = p.rfind('/');
      p = slash == std::string::npos ? std::string() : p.substr(0, slash);
    }
  }
  std::string p = pointer;
  while (true) {
    if (prefer_key) {
      auto k = keys_.find(p);
      if (k != keys_.end()) return {file_, k->second.line, k->second.column};
    }
    auto v = values_.find(p);
    if (v != values_.end()) return {file_, v->second.line, v->second.column};
    if (!prefer_key) {
      auto k = keys_.find(p);
      if (k != keys_.end()) return {file_, k->second.line, k->second.column};
    }
    if (p.empty()) return {file_, 0, 0};
    size_t slash = p.rfind('/');
    p = slash == std::string::npos ? std::string() : p.substr(0, slash);
    // Ancestors are located at their value (the mapping), which is where a
    // missing child would have to be written.
    prefer_key = false;
  }
}

std::string EscapePointerToken(const std::string& token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string PointerToDotted(const std::string& pointer) {
  std::string out;
  size_t i = 0;
  while (i < pointer.size()) {
    if (pointer[i] == '/') {
      if (!out.empty()) out += '.';
      ++i;
      continue;
    }
    size_t next = pointer.find('/', i);
    std::string tok = pointer.substr(i, next == std::string::npos ? next : next - i);
    std::string un;
    for (size_t j = 0; j < tok.size(); ++j) {
      if (tok[j] == '~' && j + 1 < tok.size()) {
        un += tok[j + 1] == '1' ? '/' : '~';
        ++j;
      } else {
        un += tok[j];
      }
    }
    if (!un.empty() && un.find_first_not_of("0123456789") == std::string::npos) {
      if (!out.empty() && out.back() == '.') out.pop_back();
      out += "[" + un + "]";
    } else {
      out += un;
    }
    if (next == std::string::npos) break;
    i = next;
  }
  return out;
}

}  // namespace nemoc
