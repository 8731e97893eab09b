// Levenshtein distance and "did you mean" suggestions (after ninja's edit_distance).
#ifndef NEMOC_EDIT_DISTANCE_H_
#define NEMOC_EDIT_DISTANCE_H_

#include <string>
#include <string_view>
#include <vector>

namespace nemoc {

int EditDistance(std::string_view a, std::string_view b);

/// The candidate closest to `word`, or "" when none is close enough to be a
/// plausible typo (distance at most a third of the word, minimum
/// `min_distance`; case is ignored). Short words such as subcommand names pass
/// 2, so a swapped pair (biuld) still counts.
std::string SuggestClosest(std::string_view word,
                           const std::vector<std::string>& candidates, int min_distance = 1);

}  // namespace nemoc

#endif  // NEMOC_EDIT_DISTANCE_H_
