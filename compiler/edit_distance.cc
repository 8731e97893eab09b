#include "edit_distance.h"

#include <algorithm>
#include <cctype>

namespace nemoc {

int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int up = row[j];
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = up;
    }
  }
  return row[b.size()];
}

namespace {
std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

std::string SuggestClosest(std::string_view word,
                           const std::vector<std::string>& candidates, int min_distance) {
  const std::string lowered = Lower(word);
  const int max_distance = std::max<int>(min_distance, static_cast<int>(word.size()) / 3);
  std::string best;
  int best_distance = max_distance + 1;
  for (const auto& candidate : candidates) {
    int d = EditDistance(lowered, Lower(candidate));
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace nemoc
