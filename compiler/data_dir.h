// Where nemoc's own data lives: schemas/, libsonnet/, profiles/.
#ifndef NEMOC_DATA_DIR_H_
#define NEMOC_DATA_DIR_H_

#include <string>

namespace nemoc {

struct DataDir {
  std::string root;  // contains schemas/project.schema.json
  std::string schema() const { return root + "/schemas/project.schema.json"; }
  std::string contracts() const { return root + "/schemas/contracts"; }
  std::string libsonnet() const { return root + "/libsonnet"; }
  std::string profiles() const { return root + "/profiles"; }
  std::string models() const { return root + "/libsonnet/models.json"; }
  std::string accelerators() const { return root + "/libsonnet/accelerators.json"; }
  /// F19: the Kubernetes/CRD JSON Schemas nemoc ships (scripts/kube-schemas).
  std::string kube_schemas() const { return root + "/schemas/kube"; }
};

/// $NEMOC_DATA_DIR, else <exe>/../share/nemoc (an installed nemoc), else the
/// source tree nemoc was built from. Returns false with a message when none
/// holds schemas/project.schema.json.
bool FindDataDir(DataDir* dir, std::string* err);

const char* NemocVersion();

}  // namespace nemoc

#endif  // NEMOC_DATA_DIR_H_
