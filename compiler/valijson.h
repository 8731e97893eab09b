// valijson, included once for every nemoc file that validates JSON against a
// schema (schema_validator.cc, kube_schemas.cc, contracts.cc): the exception
// setting and the third-party warnings silenced in one place.
#ifndef NEMOC_VALIJSON_H_
#define NEMOC_VALIJSON_H_

// valijson reports schema problems through throwRuntimeError(), which calls
// abort() unless VALIJSON_USE_EXCEPTIONS is set. A damaged bundle must give a
// diagnostic, not kill the compiler. The build defines VALIJSON_USE_EXCEPTIONS=1
// for every translation unit (CMakeLists.txt); the fallback below only matters
// when a file including this header is compiled outside that build.
#ifndef VALIJSON_USE_EXCEPTIONS
#define VALIJSON_USE_EXCEPTIONS 1
#endif

// Keep our -Wall -Wextra -Werror build quiet about third-party code (GCC 12
// also reports false "maybe-uninitialized" positives inside <regex>, which
// valijson pulls in first, when sanitizers are on).
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wall"
#pragma clang diagnostic ignored "-Wextra"
#pragma clang diagnostic ignored "-Wshadow"
#pragma clang diagnostic ignored "-Wconversion"
#elif defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic ignored "-Wrestrict"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>
#if defined(__clang__)
#pragma clang diagnostic pop
#elif defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#endif  // NEMOC_VALIJSON_H_
