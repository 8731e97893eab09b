// nemoc render: one target's objects as a single YAML stream, in the order
// `kubectl kustomize <target dir>` prints them, for `kubectl apply -f -`,
// `kubectl diff -f -` and an Argo CD config-management plugin.
#ifndef NEMOC_RENDER_H_
#define NEMOC_RENDER_H_

#include <string>

#include "tree_writer.h"

namespace nemoc {

/// The objects of a target tree (relative path -> bytes): every YAML file in
/// its stage directories (NN-name/), which the root kustomization.yaml lists;
/// never kustomization.yaml, SUMMARY.md, gitops/ or the build manifest.
/// Ordered as kustomize's legacy sort does (kubernetes-sigs/kustomize
/// api/resid/gvk.go orderFirst, orderLast and Gvk.IsLessThan; then
/// SortOrderTransformer.go's gvk|namespace|name string), each document as
/// nemoc wrote it, separated by
/// "---". Returns false with `err` naming the file that is not one object.
bool RenderTargetStream(const FileTree& tree, std::string* out, std::string* err);

}  // namespace nemoc

#endif  // NEMOC_RENDER_H_
