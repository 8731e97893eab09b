// The last line of defence for "no secret values ever": every generated file
// is scanned for known credential shapes before anything is written, so a key
// pasted into a spec (an env value, a Hydra override, an annotation, a label,
// a bucket name...) can never reach Git. Specs name Secrets; they never carry
// their values.
//
// What is detected (kinds as reported):
//   "NGC API key"            nvapi- + >= 20 [A-Za-z0-9_-]
//   "NGC API key (legacy)"   an 84-character base64 word that decodes to
//                            <26 alnum>:<UUID> (the pre-nvapi NGC format; the
//                            decode check makes random 84-char words harmless)
//   "NGC registry credential (base64 $oauthtoken)"
//                            base64 of "$oauthtoken:..." (a docker config "auth")
//   "Docker registry config (base64 .dockerconfigjson)"
//                            base64 of {"auths": ...
//   "HuggingFace token"      hf_ + >= 30 [A-Za-z0-9]
//   "AWS access key id"      AKIA/ASIA/AIDA/AROA/AIPA/ANPA/ANVA/AGPA/ABIA/ACCA/
//                            APKA/A3T? + 16 [A-Z0-9], word-bounded
//   "AWS secret access key"  40 [A-Za-z0-9/+] under an aws_secret_access_key-like
//                            key (or env name); a bare 40-char word never matches
//   "private key"            -----BEGIN <...>PRIVATE KEY<...>----- (RSA, EC, DSA,
//                            OPENSSH, ENCRYPTED, PGP ... BLOCK), through its END line
//   "bearer token"           Bearer <b64token of >= 20 chars with a digit or mixed
//                            case>, "bearer" in any case
//   "GitHub token"           ghp_/gho_/ghu_/ghs_/ghr_ + >= 36 alnum, github_pat_ + >= 22
//   "Slack token"            xox[abposr]- + >= 10 [A-Za-z0-9-] containing a digit
//   "Google API key"         AIza + >= 35 [A-Za-z0-9_-]
//   "JSON Web Token"         eyJ<...>.eyJ<...>.<signature>
//   "password in URL"        scheme://user:PASSWORD@host
//   "plain-text value of \"KEY\""
//                            a literal value under a credential-named key (see
//                            secret_scanner.cc for the names, the values that
//                            count as references, and what never matches:
//                            secretKeyRef, secretName, hfTokenSecret, ...)
// When shapes overlap (a JWT after "Bearer", an hf_ token under HF_TOKEN) the
// most specific one is reported once.
#ifndef NEMOC_SECRET_SCANNER_H_
#define NEMOC_SECRET_SCANNER_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "diagnostic.h"

namespace nemoc {

struct SecretFinding {
  /// What the value looks like, e.g. "NGC API key". Never contains the value.
  std::string kind;
  /// Byte offset of the first byte of the credential in the scanned text.
  size_t offset = 0;
  /// 1-based line and byte column of `offset` (as in every nemoc Location).
  int line = 0;
  int column = 0;
  /// Length in bytes of the credential (for "private key", the whole block).
  size_t length = 0;
};

/// All credential-shaped substrings in `text`, in order of offset. Linear in
/// the size of the text (no std::regex).
std::vector<SecretFinding> FindSecrets(std::string_view text);

/// `text` with the bytes of every finding replaced by '*' (same length, so
/// columns and carets still line up). Every diagnostic channel (text and
/// JSON: messages, hints, quoted source lines) goes through it, so a
/// credential in a spec that does not even parse, or in a `--set` value that
/// an error echoes, is never printed (field-review.md E5, E6).
std::string MaskSecrets(std::string_view text);

/// Scans every file of a generated tree (relative path -> bytes) and appends
/// one "output.secret" error per finding at {display_dir + "/" + path, line,
/// column}. Neither message nor hint contains the value (the hint shows at
/// most its first 4 characters followed by "…", and only for values of 16
/// bytes or more). Returns true when nothing was found.
///
/// Callers must not register the generated texts as SourceTexts for
/// RenderText: the quoted source line would print the credential.
bool ScanTreeForSecrets(const std::map<std::string, std::string>& tree,
                        const std::string& display_dir, Diagnostics* diags);

}  // namespace nemoc

#endif  // NEMOC_SECRET_SCANNER_H_
