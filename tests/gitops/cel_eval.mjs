// Evaluates Flux healthCheckExprs with a real CEL implementation
// (@bufbuild/cel), the way fluxcd/pkg e2cfd1a runtime/cel/status_evaluator.go
// does: observedGeneration != generation -> InProgress; then inProgress,
// failed, current in that order, first true wins; none -> InProgress; an
// evaluation error is an error (kstatus then reports Unknown).
// The object's top-level fields are the variables (runtime/cel/expression.go).
// stdin: [{exprs: {current, failed, inProgress}, object}]; stdout: statuses.
import { run } from "@bufbuild/cel";
import { readFileSync } from "node:fs";

// JSON integers become CEL ints (Kubernetes unstructured holds int64).
function toCel(v) {
  if (Array.isArray(v)) return v.map(toCel);
  if (v !== null && typeof v === "object") {
    return new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  }
  if (typeof v === "number" && Number.isInteger(v)) return BigInt(v);
  return v;
}

const cases = JSON.parse(readFileSync(0, "utf8"));
const out = cases.map(({ exprs, object }) => {
  const g = object.metadata?.generation;
  const og = object.status?.observedGeneration;
  if (og !== undefined && g !== undefined && og !== g) return "InProgress";
  const vars = Object.fromEntries(Object.entries(object).map(([k, x]) => [k, toCel(x)]));
  for (const [key, status] of [["inProgress", "InProgress"], ["failed", "Failed"], ["current", "Current"]]) {
    if (!exprs[key]) continue;
    let result;
    try {
      result = run(exprs[key], vars);
    } catch (e) {
      return "Unknown";
    }
    if (result instanceof Error || (result && result.constructor && /Error/.test(result.constructor.name))) return "Unknown";
    if (result === true) return status;
    if (result !== false) return "Unknown";
  }
  return "InProgress";
});
process.stdout.write(JSON.stringify(out));
