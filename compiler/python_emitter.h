// Writes a small, fixed subset of Python from a JSON description, so the
// Jsonnet libraries describe a generated Python module as data (the
// {"$nemoc.python": module} marker) and never build code text themselves.
// Every string literal goes through PythonStringLiteral; every name through
// an identifier check. Output is deterministic and reads like hand-written
// code: one statement per line, long calls split one argument per line.
//
// Module:     {"docstring": str, "imports": [Import], "functions": [Function],
//              "main": Expr}                 (main: the `if __name__` body)
// Import:     {"module": "nemo_run", "as": "run"}  -> import nemo_run as run
//             {"from": "nemo.collections", "import": ["llm"]}
// Function:   {"name": ident, "docstring": str, "body": [Statement], "returns": Expr}
// Statement:  {"assign": "a.b.c", "value": Expr, "comment": str?}
//             {"call": Expr}                 (an expression statement)
//             {"comment": str}  {"blank": true}
// Expr:       JSON null/bool/number/string -> None/True/False/number/'text';
//             array -> [...];
//             {"$name": "llm.pretrain"}      a dotted name;
//             {"$call": "run.Config", "args": [Expr], "kwargs": {ident: Expr}};
//             {"$dict": {str: Expr}}         a dict with string keys;
//             {"$concat": [Expr, Expr...]}   a + b (only where + binds loosest:
//                                            argument, item or assigned value).
#ifndef NEMOC_PYTHON_EMITTER_H_
#define NEMOC_PYTHON_EMITTER_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace nemoc {

/// Renders `module` as Python source ending in one '\n'. Returns false with
/// `err` naming the offending part when the description is malformed (a
/// library bug, never a user error).
bool EmitPython(const nlohmann::json& module, std::string* out, std::string* err);

/// `s` as a Python str literal: single-quoted, with backslash, quote and every
/// control or non-ASCII-printable character escaped (\n, \t, \xNN, \uNNNN,
/// \UNNNNNNNN); invalid UTF-8 bytes become U+FFFD.
std::string PythonStringLiteral(std::string_view s);

/// True for a Python identifier made of ASCII letters, digits and '_' that is
/// not a keyword; dotted names are identifiers joined by '.'.
bool IsPythonIdentifier(std::string_view s);
bool IsDottedPythonName(std::string_view s);

}  // namespace nemoc

#endif  // NEMOC_PYTHON_EMITTER_H_
