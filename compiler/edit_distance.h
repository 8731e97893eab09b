// Levenshtein distance and "did you mean" suggestions (after ninja's edit_distance).
#ifndef NEMOC_EDIT_DISTANCE_H_
#define NEMOC_EDIT_DISTANCE_H_

#include <string>
#include <string_view>
#include <vector>

namespace nemoc {

int EditDistance(std::string_view a, std::string_view b);

/// The candidate closest to `word`, or "" when none is close enough to be a
/// plausible typo (distance at most a third of the word, minimum 1; case is ignored).
std::string SuggestClosest(std::string_view word,
                           const std::vector<std::string>& candidates);

}  // namespace nemoc

#endif  // NEMOC_EDIT_DISTANCE_H_
