#include "secret_scanner.h"
#include "test_inputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace nemoc {
namespace {

namespace fs = std::filesystem;

// Every credential in this file is assembled at run time from a prefix and a
// deterministic pseudo-random body, so the source itself never looks like a
// leaked key to other scanners (and none of these values was ever valid).

constexpr std::string_view kAlnumChars =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr std::string_view kUrlSafeChars =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
constexpr std::string_view kBase64Chars =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kBase32Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
constexpr std::string_view kHexChars = "0123456789abcdef";
constexpr std::string_view kDigitChars = "0123456789";

using test_inputs::Fake;

std::string Base64(std::string_view in, bool url = false) {
  const std::string_view chars =
      url ? kUrlSafeChars.substr(0, 62) : kBase64Chars.substr(0, 62);
  const char c62 = url ? '-' : '+';
  const char c63 = url ? '_' : '/';
  auto sym = [&](uint32_t v) { return v < 62 ? chars[v] : v == 62 ? c62 : c63; };
  std::string out;
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t v = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) |
                       uint32_t(uint8_t(in[i + 2]));
    out += sym(v >> 18);
    out += sym((v >> 12) & 63);
    out += sym((v >> 6) & 63);
    out += sym(v & 63);
  }
  if (i < in.size()) {
    const uint32_t b0 = uint8_t(in[i]);
    const uint32_t b1 = i + 1 < in.size() ? uint8_t(in[i + 1]) : 0;
    const uint32_t v = (b0 << 16) | (b1 << 8);
    out += sym(v >> 18);
    out += sym((v >> 12) & 63);
    if (i + 1 < in.size()) {
      out += sym((v >> 6) & 63);
    } else if (!url) {
      out += '=';
    }
    if (!url) out += '=';
  }
  return out;
}

std::string FakeUuid(uint64_t seed) {
  return Fake(kHexChars, 8, seed) + "-" + Fake(kHexChars, 4, seed + 1) + "-" +
         Fake(kHexChars, 4, seed + 2) + "-" + Fake(kHexChars, 4, seed + 3) + "-" +
         Fake(kHexChars, 12, seed + 4);
}

// ---------------------------------------------------------------------------
// The shapes, each with a realistic fake.

struct Shape {
  std::string id;        // test-name suffix
  std::string kind;      // expected kind; empty: "plain-text value of \"<label>\""
  std::string lead;      // shape text before the credential ("Bearer ")
  std::string secret;    // the credential: reported offset, never in a message
  std::string trail;     // shape text after it ("@host/path")
  std::string key;       // labelled shapes: the key the value sits under
  std::string env_name;  // labelled shapes: the env variable name
};

std::string LegacyNgcKey() {
  return Base64(Fake(kAlnumChars, 26, 2) + ":" + FakeUuid(3));
}

std::string Jwt() {
  return Base64(R"({"alg":"HS256","typ":"JWT"})", true) + "." +
         Base64(R"({"sub":"nemo-trainer","iat":1716239022,"exp":1716242622})", true) + "." +
         Fake(kUrlSafeChars, 43, 13);
}

std::vector<Shape> Shapes() {
  const std::string ngc = "nvapi-" + Fake(kUrlSafeChars, 64, 1);
  return {
      {"NgcApiKey", "NGC API key", "", ngc, "", "", ""},
      {"NgcLegacyKey", "NGC API key (legacy)", "", LegacyNgcKey(), "", "", ""},
      {"NgcOauthBase64", "NGC registry credential (base64 $oauthtoken)", "",
       Base64("$oauthtoken:" + ngc), "", "", ""},
      {"DockerConfigBase64", "Docker registry config (base64 .dockerconfigjson)", "",
       Base64(R"({"auths":{"nvcr.io":{"username":"$oauthtoken","password":")" + ngc +
              R"("}}})"),
       "", "", ""},
      {"HuggingFaceToken", "HuggingFace token", "", "hf_" + Fake(kAlnumChars, 34, 4), "", "",
       ""},
      {"AwsAccessKeyId", "AWS access key id", "", "AKIA" + Fake(kBase32Chars, 16, 5), "", "",
       ""},
      {"AwsSecretAccessKey", "AWS secret access key", "",
       Fake(kAlnumChars, 1, 6) + Fake(kBase64Chars, 39, 7), "", "aws_secret_access_key",
       "AWS_SECRET_ACCESS_KEY"},
      {"PrivateKey", "private key", "", "-----BEGIN RSA PRIVATE " "KEY-----", "", "", ""},
      {"BearerToken", "bearer token", "Bearer ", Fake(kAlnumChars, 38, 8) + "._~", "", "", ""},
      {"GitHubToken", "GitHub token", "", "ghp_" + Fake(kAlnumChars, 36, 9), "", "", ""},
      {"SlackToken", "Slack token", "",
       "xoxb-" + Fake(kDigitChars, 12, 10) + "-" + Fake(kDigitChars, 13, 11) + "-" +
           Fake(kAlnumChars, 24, 12),
       "", "", ""},
      {"GoogleApiKey", "Google API key", "", "AIza" + Fake(kUrlSafeChars, 35, 14), "", "", ""},
      {"Jwt", "JSON Web Token", "", Jwt(), "", "", ""},
      {"UrlPassword", "password in URL", "https://trainer:", Fake(kAlnumChars, 16, 15),
       "@minio.storage.internal:9000/checkpoints", "", ""},
      {"Password", "", "", Fake(kAlnumChars, 18, 16), "", "password", "DB_PASSWORD"},
      {"Token", "", "", Fake(kAlnumChars, 24, 17), "", "token", "SERVICE_TOKEN"},
      {"ApiKey", "", "", Fake(kHexChars, 40, 18), "", "apiKey", "WANDB_API_KEY"},
      {"Secret", "", "", Fake(kAlnumChars, 32, 19), "", "secret", "CLIENT_SECRET"},
      // Field review E21 (the second campaign): names and prefixes that reached out/ with exit 0.
      {"MysqlPwd", "", "", Fake(kAlnumChars, 14, 50), "", "db_pwd", "MYSQL_PWD"},
      {"ServiceCredentials", "", "", Fake(kAlnumChars, 20, 51), "", "credentials", "SERVICE_CREDENTIALS"},
      {"AzureAccountKey", "", "", Fake(kAlnumChars, 64, 52), "", "accountKey", "AZURE_STORAGE_ACCOUNT_KEY"},
      {"LowerSnakePass", "", "", Fake(kAlnumChars, 16, 58), "", "smtp_pass", "SMTP_PASS"},
      {"OpenAiKey", "OpenAI API key", "", "sk-proj-" + Fake(kUrlSafeChars, 64, 53), "", "", ""},
      {"StripeKey", "Stripe secret key", "", "sk_live_" + Fake(kAlnumChars, 24, 54), "", "", ""},
      {"SlackWebhook", "Slack webhook URL", "https://",
       "hooks.slack.com/services/T" + Fake(kAlnumChars, 8, 55) + "/B" + Fake(kAlnumChars, 9, 56) + "/" +
           Fake(kAlnumChars, 24, 57),
       "", "", ""},
      // The shapes field-review.md E7 saw reach out/ (2026-11-24 attack campaign).
      {"GitLabToken", "GitLab token", "", "glpat-" + Fake(kUrlSafeChars, 20, 40), "", "", ""},
      {"UrlToken", "token in URL", "https://", Fake(kHexChars, 40, 41), "@github.com/acme/infra.git",
       "", ""},
      {"UrlPasswordPercentEncoded", "password in URL", "https://trainer%3A",
       Fake(kAlnumChars, 16, 42), "@minio.storage.internal:9000/checkpoints", "", ""},
      {"BasicAuth", "basic auth credential", "Basic ",
       Base64("trainer:" + Fake(kAlnumChars, 16, 43)), "", "", ""},
      {"PasswordOption", "plain-text value of \"--password\"", "--password ",
       Fake(kAlnumChars, 16, 44), "", "", ""},
      {"DollarPassword", "", "", "$Hunter2" + Fake(kAlnumChars, 12, 45), "", "password",
       "DB_PASSWORD"},
      {"EnvPassSuffix", "", "", "$Hunter2" + Fake(kAlnumChars, 12, 46), "", "password",
       "DB_PASS"},
  };
}

// ---------------------------------------------------------------------------
// The places: each builds a realistic file with the shape in it.

constexpr char kMark = '\x01';  // where the shape goes

struct Placed {
  std::string path;
  std::string text;
  size_t offset;       // of the credential
  std::string label;   // for "plain-text value of" kinds
};

struct Place {
  std::string id;
  // (shape) -> file text with kMark where lead+secret+trail goes, its path, the label.
  std::function<Placed(const Shape&)> build;
};

Placed Fill(std::string path, std::string templ, const Shape& s, std::string label) {
  const size_t at = templ.find(kMark);
  const size_t offset = at + s.lead.size();
  templ.replace(at, 1, s.lead + s.secret + s.trail);
  return {std::move(path), std::move(templ), offset, std::move(label)};
}

std::vector<Place> Places() {
  return {
      {"YamlValue",
       [](const Shape& s) {
         const std::string key = s.key.empty() ? "notes" : s.key;
         return Fill("00-base/configmap-llama2-70b-sft-extra.yaml",
                     "apiVersion: v1\n"
                     "kind: ConfigMap\n"
                     "metadata:\n"
                     "  name: llama2-70b-sft-extra\n"
                     "  namespace: nemo-training\n"
                     "  labels:\n"
                     "    app.kubernetes.io/managed-by: nemoc\n"
                     "data:\n"
                     "  " + key + ": " + kMark + "\n"
                     "  region: us-east-1\n",
                     s, key);
       }},
      {"ConfigYaml",
       [](const Shape& s) {
         const std::string key = s.key.empty() ? "name" : s.key;
         return Fill("00-base/configmap-llama2-70b-sft-train-config.yaml",
                     "apiVersion: v1\n"
                     "kind: ConfigMap\n"
                     "metadata:\n"
                     "  name: llama2-70b-sft-train-config\n"
                     "  namespace: nemo-training\n"
                     "data:\n"
                     "  config.yaml: |\n"
                     "    exp_manager:\n"
                     "      create_wandb_logger: true\n"
                     "      explicit_log_dir: /results/llama2-70b-sft/onprem/train\n"
                     "      wandb_logger_kwargs:\n"
                     "        " + key + ": " + kMark + "\n"
                     "        project: llama2-70b-sft\n"
                     "    model:\n"
                     "      tokenizer:\n"
                     "        library: sentencepiece\n"
                     "        model: /results/models/tokenizer.model\n"
                     "      tokens_to_generate: 32\n",
                     s, key);
       }},
      {"EnvList",
       [](const Shape& s) {
         const std::string env = s.env_name.empty() ? "EXTRA_FLAGS" : s.env_name;
         return Fill("30-train/pytorchjob-llama2-70b-sft-train.yaml",
                     "apiVersion: kubeflow.org/v1\n"
                     "kind: PyTorchJob\n"
                     "spec:\n"
                     "  pytorchReplicaSpecs:\n"
                     "    Master:\n"
                     "      template:\n"
                     "        spec:\n"
                     "          containers:\n"
                     "          - name: pytorch\n"
                     "            env:\n"
                     "            - name: NCCL_DEBUG\n"
                     "              value: WARN\n"
                     "            - name: " + env + "\n"
                     "              value: " + kMark + "\n"
                     "            - name: TORCH_NCCL_ASYNC_ERROR_HANDLING\n"
                     "              value: \"1\"\n"
                     "            image: nvcr.io/nvidia/nemo:24.07\n"
                     "          imagePullSecrets:\n"
                     "          - name: ngc-registry\n",
                     s, env);
       }},
      {"Annotation",
       [](const Shape& s) {
         const std::string key = s.key.empty() ? "note" : s.key;
         return Fill("30-train/jobset-llama2-70b-sft-train.yaml",
                     "apiVersion: jobset.x-k8s.io/v1alpha2\n"
                     "kind: JobSet\n"
                     "metadata:\n"
                     "  name: llama2-70b-sft-train\n"
                     "  annotations:\n"
                     "    k8s.v1.cni.cncf.io/networks: ib-sriov-net\n"
                     "    nemoc.dev/" + key + ": " + kMark + "\n"
                     "  labels:\n"
                     "    app.kubernetes.io/managed-by: nemoc\n",
                     s, key);
       }},
      {"SummaryMd",
       [](const Shape& s) {
         std::string row = s.key.empty()
                               ? std::string("| Note | ") + kMark + " |\n"
                               : std::string("| Storage (results) | NFS at /results |\n");
         std::string excerpt =
             s.key.empty() ? std::string()
                           : "\n## Spec excerpt\n\n```yaml\nenv:\n  " + s.key + ": " + kMark +
                                 "\n```\n";
         return Fill("SUMMARY.md",
                     "# llama2-70b-sft / onprem\n\n"
                     "Generated by nemoc 0.1.0 from `llama2-70b-sft.yaml`. Do not edit.\n\n"
                     "| | |\n|---|---|\n"
                     "| Profile | `vanilla-k8s` |\n"
                     "| Nodes × GPUs | 4 × 8 = **32 GPUs** (NVIDIA H100 80GB) |\n" +
                         row +
                         "| Image | `nvcr.io/nvidia/nemo:24.07` |\n" + excerpt +
                         "\n## Stages\n\n```mermaid\nflowchart LR\n  s0[\"00-base\"] --> s1\n```\n",
                     s, s.key);
       }},
      {"NemocManifest",
       [](const Shape& s) {
         const std::string line = s.key.empty() ? std::string("30-train/extra-") + kMark + ".yaml"
                                                : s.key + "=" + kMark;
         return Fill(".nemoc-manifest",
                     "00-base/configmap-llama2-70b-sft-train-config.yaml\n"
                     "00-base/kustomization.yaml\n" +
                         line +
                         "\n30-train/kustomization.yaml\n"
                         "SUMMARY.md\n"
                         "kustomization.yaml\n",
                     s, s.key);
       }},
      {"StartOfFile",
       [](const Shape& s) {
         const std::string head = s.key.empty() ? std::string(1, kMark) : s.key + ": " + kMark;
         return Fill("00-base/namespace-nemo-training.yaml",
                     head + "\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: nemo-training\n",
                     s, s.key);
       }},
      {"EndOfFile",
       [](const Shape& s) {
         const std::string key = s.key.empty() ? "notes" : s.key;
         return Fill("00-base/kustomization.yaml",
                     "apiVersion: kustomize.config.k8s.io/v1beta1\n"
                     "kind: Kustomization\n"
                     "resources:\n"
                     "- namespace-nemo-training.yaml\n"
                     "commonAnnotations:\n"
                     "  " + key + ": " + kMark,  // no final newline
                     s, key);
       }},
  };
}

std::pair<int, int> LineColumn(std::string_view text, size_t offset) {
  int line = 1;
  size_t start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  return {line, static_cast<int>(offset - start + 1)};
}

std::string Describe(const std::vector<SecretFinding>& fs) {
  std::string out;
  for (const auto& f : fs) {
    out += "  " + f.kind + " at " + std::to_string(f.line) + ":" + std::to_string(f.column) +
           " (offset " + std::to_string(f.offset) + ", length " + std::to_string(f.length) +
           ")\n";
  }
  return out.empty() ? "  (none)\n" : out;
}

struct ShapeInPlace {
  Shape shape;
  Place place;
};

class SecretScannerShapes : public ::testing::TestWithParam<ShapeInPlace> {};

TEST_P(SecretScannerShapes, FoundAtExactPositionWithoutLeakingTheValue) {
  const Shape& shape = GetParam().shape;
  const Placed placed = GetParam().place.build(shape);
  ASSERT_EQ(placed.text.compare(placed.offset, shape.secret.size(), shape.secret), 0);
  const std::string kind =
      shape.kind.empty() ? "plain-text value of \"" + placed.label + "\"" : shape.kind;
  const auto [line, column] = LineColumn(placed.text, placed.offset);

  const std::vector<SecretFinding> found = FindSecrets(placed.text);
  ASSERT_EQ(found.size(), 1u) << placed.text << "\nfound:\n" << Describe(found);
  EXPECT_EQ(found[0].kind, kind);
  EXPECT_EQ(found[0].offset, placed.offset);
  EXPECT_EQ(found[0].line, line);
  EXPECT_EQ(found[0].column, column);
  // A private key covers its block; in a file name, "Bearer x.yaml" and
  // "--password x.yaml" run on.
  if (shape.kind != "private key" &&
      !((shape.kind == "bearer token" || shape.id == "PasswordOption") &&
        GetParam().place.id == "NemocManifest")) {
    EXPECT_EQ(found[0].length, shape.secret.size());
  }

  Diagnostics diags;
  const std::map<std::string, std::string> tree = {{placed.path, placed.text}};
  EXPECT_FALSE(ScanTreeForSecrets(tree, "out/llama2-70b-sft/onprem", &diags));
  ASSERT_EQ(diags.items().size(), 1u);
  const Diagnostic& d = diags.items()[0];
  EXPECT_EQ(d.severity, Severity::kError);
  EXPECT_EQ(d.code, "output.secret");
  EXPECT_EQ(d.location.file, "out/llama2-70b-sft/onprem/" + placed.path);
  EXPECT_EQ(d.location.line, line);
  EXPECT_EQ(d.location.column, column);
  EXPECT_EQ(d.message,
            kind + " in generated output: specs reference Secrets by name, never by value");
  // At most the first 4 characters of the value, anywhere in the diagnostic.
  for (const std::string* text : {&d.message, &d.hint}) {
    EXPECT_EQ(text->find(shape.secret.substr(0, 5)), std::string::npos) << *text;
    EXPECT_EQ(text->find(shape.secret.substr(shape.secret.size() - 5)), std::string::npos)
        << *text;
  }
  EXPECT_NE(d.hint.find("Secret"), std::string::npos) << d.hint;
}

std::vector<ShapeInPlace> AllShapesInAllPlaces() {
  std::vector<ShapeInPlace> out;
  for (const Shape& s : Shapes()) {
    for (const Place& p : Places()) out.push_back({s, p});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(SecretScanner, SecretScannerShapes, ::testing::ValuesIn(AllShapesInAllPlaces()),
                         [](const ::testing::TestParamInfo<ShapeInPlace>& info) {
                           return info.param.shape.id + "_In" + info.param.place.id;
                         });

// ---------------------------------------------------------------------------
// Exact positions written out (the parameterized test computes them).

TEST(SecretScanner, ReportsLineAndColumnOfTheValue) {
  const std::string hf = "hf_" + Fake(kAlnumChars, 34, 4);
  const std::string text =
      "kind: ConfigMap\n"
      "data:\n"
      "  HF_HOME: /results/hf\n"
      "  note: " + hf + "\n";
  const auto found = FindSecrets(text);
  ASSERT_EQ(found.size(), 1u) << Describe(found);
  EXPECT_EQ(found[0].line, 4);
  EXPECT_EQ(found[0].column, 9);
  EXPECT_EQ(found[0].offset, text.find("hf_" + hf.substr(3, 4)));
}

TEST(SecretScanner, SeveralFindingsInOneFileInOrder) {
  const std::string ghp = "ghp_" + Fake(kAlnumChars, 36, 9);
  const std::string aws = "ASIA" + Fake(kBase32Chars, 16, 5);
  const std::string pw = Fake(kAlnumChars, 12, 20);
  const std::string text = "a: " + ghp + "\nb: [" + aws + "]\r\nc:\n  password: \"" + pw +
                           "\"\n";
  const auto found = FindSecrets(text);
  ASSERT_EQ(found.size(), 3u) << Describe(found);
  EXPECT_EQ(found[0].kind, "GitHub token");
  EXPECT_EQ(found[0].line, 1);
  EXPECT_EQ(found[0].column, 4);
  EXPECT_EQ(found[1].kind, "AWS access key id");
  EXPECT_EQ(found[1].line, 2);
  EXPECT_EQ(found[1].column, 5);
  EXPECT_EQ(found[2].kind, "plain-text value of \"password\"");
  EXPECT_EQ(found[2].line, 4);
  EXPECT_EQ(found[2].column, 14);
  EXPECT_EQ(found[2].length, pw.size());
}

TEST(SecretScanner, EmptyTextAndValueAtTheVeryEnd) {
  EXPECT_TRUE(FindSecrets("").empty());
  const std::string key = "nvapi-" + Fake(kUrlSafeChars, 20, 1);  // the minimum length
  const auto found = FindSecrets(key);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].line, 1);
  EXPECT_EQ(found[0].column, 1);
  EXPECT_EQ(found[0].length, key.size());
  EXPECT_TRUE(FindSecrets(key.substr(0, key.size() - 1)).empty());  // 19 after the prefix
}

// ---------------------------------------------------------------------------
// Variants of individual shapes.

TEST(SecretScannerPrivateKey, EveryVariantIsOneFindingCoveringTheBlock) {
  for (std::string label : {"RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY",
                            "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "PRIVATE KEY",
                            "PGP PRIVATE KEY BLOCK"}) {
    const std::string begin = "-----BEGIN " + label + "-----";
    const std::string block = begin + "\n    " + Fake(kBase64Chars, 64, 21) + "\n    " +
                              Fake(kBase64Chars, 64, 22) + "\n    -----END " + label + "-----";
    const std::string text =
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  id_rsa: |\n    " + block + "\n  other: x\n";
    const auto found = FindSecrets(text);
    ASSERT_EQ(found.size(), 1u) << label << "\n" << Describe(found);
    EXPECT_EQ(found[0].kind, "private key");
    EXPECT_EQ(found[0].line, 5);
    EXPECT_EQ(found[0].column, 5);
    EXPECT_EQ(found[0].length, block.size()) << label;
  }
}

TEST(SecretScannerPrivateKey, ManyHeadersWithoutEndLines) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "-----BEGIN EC PRIVATE KEY-----\n";
  EXPECT_EQ(FindSecrets(text).size(), 2000u);
}

TEST(SecretScannerAws, AccessKeyIdPrefixesAndBoundaries) {
  const std::string body = Fake(kBase32Chars, 16, 23);
  for (std::string prefix : {"AKIA", "ASIA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "AGPA",
                             "ABIA", "ACCA", "A3TX"}) {
    const auto found = FindSecrets("AWS_ACCESS_KEY_ID=" + prefix + body + "\n");
    ASSERT_EQ(found.size(), 1u) << prefix;
    EXPECT_EQ(found[0].kind, "AWS access key id");
    EXPECT_EQ(found[0].column, 19);
  }
  EXPECT_EQ(FindSecrets("id: \"AKIA" + body + "\"").size(), 1u);
  EXPECT_TRUE(FindSecrets("AKIA" + body + "Z").empty());      // 17 after the prefix
  EXPECT_TRUE(FindSecrets("AKIA" + body + "z").empty());      // a longer word
  EXPECT_TRUE(FindSecrets("XAKIA" + body).empty());           // a longer word
  EXPECT_TRUE(FindSecrets("AKIA" + body.substr(1)).empty());  // 15
  EXPECT_TRUE(FindSecrets("akia" + body).empty());
}

TEST(SecretScannerAws, SecretAccessKeyOnlyWhenLabelled) {
  const std::string secret = "wJ" + Fake(kBase64Chars, 38, 24);
  EXPECT_TRUE(FindSecrets("checksum: " + secret + "\n").empty());
  EXPECT_TRUE(FindSecrets(secret).empty());
  for (std::string text : {"aws_secret_access_key = " + secret + "\n",
                           "AWS_SECRET_ACCESS_KEY=" + secret,
                           "  secretAccessKey: '" + secret + "'\n",
                           "- {name: AWS_SECRET_ACCESS_KEY, value: \"" + secret + "\"}\n",
                           "- value: " + secret + "\n  name: AWS_SECRET_ACCESS_KEY\n"}) {
    const auto found = FindSecrets(text);
    ASSERT_EQ(found.size(), 1u) << text;
    EXPECT_EQ(found[0].kind, "AWS secret access key") << text;
    EXPECT_EQ(found[0].offset, text.find(secret)) << text;
  }
  // Under the label but not 40 characters: still a literal credential.
  const auto short_value = FindSecrets("aws_secret_access_key: " + secret.substr(0, 30));
  ASSERT_EQ(short_value.size(), 1u);
  EXPECT_EQ(short_value[0].kind, "plain-text value of \"aws_secret_access_key\"");
}

TEST(SecretScannerNgc, LegacyKeyNeedsTheDecodedShape) {
  const std::string key = LegacyNgcKey();
  ASSERT_EQ(key.size(), 84u);
  EXPECT_EQ(FindSecrets("NGC_CLI_API_KEY=" + key).size(), 1u);
  // 84 random base64 characters (a checksum, a blob line) are not a key.
  for (uint64_t seed = 100; seed < 200; ++seed) {
    EXPECT_TRUE(FindSecrets("sum: " + Fake(kBase64Chars, 84, seed) + "\n").empty()) << seed;
  }
  EXPECT_TRUE(FindSecrets("x: " + key + "A\n").empty());   // 85 long
  EXPECT_TRUE(FindSecrets("x: " + key + "==\n").empty());  // a padded longer blob
}

TEST(SecretScannerNgc, NvapiKeyInsideLongerValues) {
  const std::string key = "nvapi-" + Fake(kUrlSafeChars, 64, 1);
  for (std::string text : {"--docker-password=" + key, "{\"password\":\"" + key + "\"}",
                           "bucket: nemo-" + key, "k: '" + key + "'"}) {
    const auto found = FindSecrets(text);
    ASSERT_EQ(found.size(), 1u) << text << Describe(found);
    EXPECT_EQ(found[0].kind, "NGC API key");
    EXPECT_EQ(found[0].offset, text.find(key));
  }
}

TEST(SecretScannerJwt, SignatureMayBeEmptyHeaderMustBeJson) {
  const std::string jwt = Jwt();
  const std::string unsigned_jwt = jwt.substr(0, jwt.rfind('.') + 1);
  EXPECT_EQ(FindSecrets("t: " + unsigned_jwt + "\n").size(), 1u);
  EXPECT_TRUE(FindSecrets("t: eyJhbGciOiJIUzI1NiJ9\n").empty());             // no payload
  EXPECT_TRUE(FindSecrets("t: eyJhbGciOiJIUzI1NiJ9.abcdefghijkl.x\n").empty());  // not JSON
}

TEST(SecretScannerOverlap, MostSpecificShapeReportedOnce) {
  const std::string jwt = Jwt();
  const std::string hf = "hf_" + Fake(kAlnumChars, 34, 4);
  struct Case {
    std::string text;
    std::string kind;
  };
  for (const Case& c : std::vector<Case>{
           {"Authorization: Bearer " + jwt + "\n", "JSON Web Token"},
           {"HF_TOKEN: " + hf + "\n", "HuggingFace token"},
           {"- name: HF_TOKEN\n  value: " + hf + "\n", "HuggingFace token"},
           {"token: \"Bearer " + Fake(kAlnumChars, 30, 25) + "\"\n", "bearer token"},
           {"url: https://u:" + hf + "@h/x\n", "HuggingFace token"},
       }) {
    const auto found = FindSecrets(c.text);
    ASSERT_EQ(found.size(), 1u) << c.text << Describe(found);
    EXPECT_EQ(found[0].kind, c.kind) << c.text;
  }
}

TEST(SecretScannerGeneric, KeysInEveryNotation) {
  const std::string v = Fake(kAlnumChars, 20, 26);
  struct Case {
    std::string text;
    std::string label;
  };
  for (const Case& c : std::vector<Case>{
           {"- ++model.wandb.api_key=" + v + "\n", "model.wandb.api_key"},
           {"- --hf-token=" + v + "\n", "hf-token"},
           {"export GITHUB_TOKEN=" + v + "\n", "GITHUB_TOKEN"},
           {"url: https://h/x?token=" + v + "&y=1\n", "token"},
           {"{\"username\":\"$oauthtoken\",\"password\":\"" + v + "\"}", "password"},
           {"config.json: \"{\\\"apiKey\\\": \\\"" + v + "\\\"}\"\n", "apiKey"},
           {"env: [{name: REGISTRY_PASSWORD, value: " + v + "}]\n", "REGISTRY_PASSWORD"},
           {"env: [{\"name\": \"NGC_API_KEY\", \"value\": \"" + v + "\"}]\n", "NGC_API_KEY"},
           {"clientSecret: " + v + " # rotate monthly\n", "clientSecret"},
           {"password: \"correct horse " + v + "\"\n", "password"},
           {"privateKey: |\n  " + v + "\n", "privateKey"},
           {"secretKey: " + v, "secretKey"},
           {"WANDB_API_KEY: " + v + "\n", "WANDB_API_KEY"},
           {"JWT_SECRET: " + v + "\n", "JWT_SECRET"},
           {"literals:\n- password=" + v + "\n", "password"},
       }) {
    const auto found = FindSecrets(c.text);
    ASSERT_EQ(found.size(), 1u) << c.text << Describe(found);
    EXPECT_EQ(found[0].kind, "plain-text value of \"" + c.label + "\"") << c.text;
    EXPECT_EQ(found[0].offset, c.text.find(v) - (c.text.find("correct") != std::string::npos
                                                     ? std::string("correct horse ").size()
                                                     : 0))
        << c.text;
  }
}

TEST(SecretScannerGeneric, CredentialShapedKeyIsNotQuotedInTheKind) {
  const std::string aws = "AKIA" + Fake(kBase32Chars, 16, 5);
  const std::string v = Fake(kAlnumChars, 20, 27);
  const std::string text = aws + "_PASSWORD: " + v + "\n";
  const auto found = FindSecrets(text);
  ASSERT_EQ(found.size(), 2u) << Describe(found);
  EXPECT_EQ(found[0].kind, "AWS access key id");
  EXPECT_EQ(found[1].kind, "plain-text value under a credential-named key");
  EXPECT_EQ(found[1].offset, text.find(v));
  Diagnostics diags;
  EXPECT_FALSE(ScanTreeForSecrets({{"a.yaml", text}}, "out/p/t", &diags));
  for (const Diagnostic& d : diags.items()) {
    EXPECT_EQ(d.message.find(aws.substr(0, 5)), std::string::npos) << d.message;
    EXPECT_EQ(d.message.find(v.substr(0, 5)), std::string::npos) << d.message;
  }
}

// ---------------------------------------------------------------------------
// What must never match.

TEST(SecretScannerNearMiss, OrdinaryManifestContentIsClean) {
  const std::string sha = Fake(kHexChars, 64, 30);
  const std::string git = Fake(kHexChars, 40, 31);
  const std::vector<std::string> texts = {
      "image: nvcr.io/nvidia/nemo@sha256:" + sha + "\n",
      "digest: sha256:" + sha + "\n",
      "  uid: " + FakeUuid(32) + "\n",
      "  annotations:\n    nemoc.dev/source-commit: " + git + "\n",
      "- name: HF_HUB_ENABLE_HF_TRANSFER\n  value: \"1\"\n",
      "pip install hf_transfer && python -c 'import hf_transfer'\n",
      "hf_" + Fake(kAlnumChars, 29, 33) + "\n",  // one short
      "uses the nvapi endpoint; see nvapi-docs and nvapi-key-rotation\n",
      "NVAPI_BASE: https://integrate.api.nvidia.com/v1\n",
      "AKIA" + Fake(kBase32Chars, 20, 34) + "\n",  // AKIA inside a longer word
      "-----BEGIN CERTIFICATE-----\n" + Fake(kBase64Chars, 64, 35) +
          "\n-----END CERTIFICATE-----\n",
      "-----BEGIN PUBLIC KEY-----\n" + Fake(kBase64Chars, 64, 36) + "\n-----END PUBLIC KEY-----\n",
      "env:\n- name: HF_TOKEN\n  valueFrom:\n    secretKeyRef:\n      name: hf-token\n"
      "      key: HF_TOKEN\n",
      "imagePullSecrets: [ngc-registry]\n",
      "imagePullSecrets:\n- name: ngc-registry\n",
      "hfTokenSecret: hf-token\n",
      "tokenSecret: hf-token\n",
      "passwordSecret: db-credentials\n",
      "volumes:\n- name: creds\n  secret:\n    secretName: ngc-registry\n",
      "- name: creds\n  secret: {secretName: ngc-registry, defaultMode: 0400}\n",
      "envFrom:\n- secretRef:\n    name: wandb\n",
      "password: ${DB_PASSWORD}\n",
      "token: $(HF_TOKEN)\n",
      // E24: a --set reference by name (and SUMMARY.md's record of it), under a credential name.
      "- `--set spec.stages.train.env.DB_PASSWORD={secretKeyRef: {name: db, key: k}}`\n",
      "--set spec.stages.train.env.API_TOKEN={ secretKeyRef: {name: api, key: token}}\n",
      "- --hf-token=$(HF_TOKEN)\n",
      "apiKey: ${oc.env:WANDB_API_KEY}\n",
      "apiKey: ???\n",
      "password: \"\"\n",
      "token: null\n",
      "secret: ~\n",
      "password: '********'\n",
      "token: <your-token>\n",
      "token: {{ .Values.token }}\n",
      "tokenFile: /var/run/secrets/tokens/hf\n",
      "token: /var/run/secrets/kubernetes.io/serviceaccount/token\n",
      "automountServiceAccountToken: false\n",
      "serviceAccountToken:\n  path: token\n  expirationSeconds: 3600\n",
      "tokenizer:\n  library: sentencepiece\n  model: /results/tokenizer.model\n",
      "pad_token: <pad>\neos_token: </s>\n",
      "tokens_to_generate: 32\n",
      "max_tokens: 4096\ntoken_count: 12\n",
      "| Token | see Secret `hf-token` |\n",
      "Secret: referenced by name, never by value\n",
      "Authorization: Bearer <token>\n",
      "Authorization: Bearer $(TOKEN)\n",
      "the bearer authentication-configuration-guide\n",
      "Bearer " + Fake(kAlnumChars, 19, 37) + "\n",  // too short
      "xoxb-notatoken\n",
      "xoxb-12345\n",
      "key: eyJhbGciOiJIUzI1NiJ9\n",
      "url: https://user@github.com/org/repo.git\n",
      "url: https://user:${PASSWORD}@host/x\n",
      "url: git@github.com:org/repo.git\n",
      "endpoint: http://minio.storage.internal:9000/bucket\n",
      "- --rdzv-endpoint=llama2-70b-sft-train-master-0:29500\n",
      "checksum: " + Fake(kBase64Chars.substr(0, 62), 40, 38) + "\n",  // a bare 40-char string
      "ghp_short\ngithub_pat_short\n",
      "AIza" + Fake(kUrlSafeChars, 30, 39) + "\n",
      "a == b\npassword == x\ntoken != y\n",
      "secretName: x\nsecretKeyRef: {name: x, key: password}\n",
      "privateKeySecretRef:\n  name: letsencrypt\n",
      "password: $DB_PASSWORD\n",
      "- --password=$(DB_PASSWORD)\n",
      "- --password-file /var/run/secrets/db/password\n",
      "- --token-budget 4096\n",
      "args: [--password, ${DB_PASSWORD}]\n",
      "url: https://oauth2@gitlab.com/acme/infra.git\n",
      "url: https://ci-bot-for-training-cluster@github.com/acme/infra.git\n",
      "use basic authentication-or-tokens\n",
      "Basic realm\n",
      "glpat-short\n",
      "resource: 100%3A\n",
  };
  for (const std::string& text : texts) {
    const auto found = FindSecrets(text);
    EXPECT_TRUE(found.empty()) << text << Describe(found);
  }
}

// E24's exception is Kubernetes' reference keys only: a brace around a value
// under a credential name is still a value.
// E21: a base64-encoded private key, and a registry login without a scheme.
TEST(SecretScannerE21, Base64PrivateKeysAndBareRegistryLogins) {
  // base64("-----BEGIN OPENSSH PRIVATE KEY-----\n...").
  const std::string pem = "LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0KYjNCbGJuTnphQzFyWlhrdGRqRUFBQUFB";
  ASSERT_EQ(FindSecrets("key: " + pem + "\n").size(), 1u);
  EXPECT_EQ(FindSecrets("key: " + pem + "\n")[0].kind, "private key (base64)");
  const std::string body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMw";
  EXPECT_EQ(FindSecrets("key: " + body + "\n").size(), 1u);
  // base64("-----BEGIN CERTIFICATE-----") is no key.
  EXPECT_TRUE(FindSecrets("ca: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrVENCK3dJSkFKVmQ=\n").empty());
  const auto login = FindSecrets("image: u:Hunter2pass@registry.example.com/team/nemo\n");
  ASSERT_EQ(login.size(), 1u);
  EXPECT_EQ(login[0].kind, "password in a registry or host login");
  EXPECT_EQ(login[0].length, std::string("Hunter2pass").size());
  EXPECT_EQ(FindSecrets("\"bot:s3cret@localhost:5000/x\"").size(), 1u);
  for (const char* clean : {"image: nemo:24.07@sha256:1234abcd\n", "contact: mailto:ops@example.com\n",
                            "repo: git@github.com:acme/infra.git\n", "image: nvcr.io/nvidia/nemo:24.07\n",
                            "args: [--rdzv-endpoint=job-master-0:29500]\n", "a: b:c@d\n",
                            "ref: user:${PASSWORD}@registry.example.com\n",
                            // random printable text the bench scans (bench/run, perftest)
                            "UNSK)Z\"A61'\\Iug3'p9:7ol@l.H3x]\\q{TQ<gMP:7{;]\n"}) {
    EXPECT_TRUE(FindSecrets(clean).empty()) << clean << Describe(FindSecrets(clean));
  }
}

TEST(SecretScannerNearMiss, ABracedValueThatIsNoReferenceIsStillAValue) {
  for (const std::string& text : {std::string("--set spec.stages.train.env.DB_PASSWORD={hunter2-") +
                                      Fake(kAlnumChars, 12, 41) + "}\n",
                                  std::string("DB_PASSWORD={secretKeyRefx: ") + Fake(kAlnumChars, 12, 42) + "}\n"}) {
    const auto found = FindSecrets(text);
    EXPECT_FALSE(found.empty()) << text;
  }
}

// Real generated trees from the repository: out/ and tests/golden/.
TEST(SecretScannerNearMiss, RealGeneratedTreesAreClean) {
  size_t files = 0;
  size_t targets = 0;
  for (const char* root : {"out", "tests/golden"}) {
    const fs::path base = fs::path(NEMOC_SOURCE_DIR) / root;
    if (!fs::exists(base)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(base)) {
      if (!entry.is_regular_file() || entry.path().filename() != ".nemoc-manifest") continue;
      // One generated target directory: every file under it.
      const fs::path dir = entry.path().parent_path();
      std::map<std::string, std::string> tree;
      for (const auto& f : fs::recursive_directory_iterator(dir)) {
        if (!f.is_regular_file()) continue;
        std::ifstream in(f.path(), std::ios::binary);
        std::ostringstream bytes;
        bytes << in.rdbuf();
        tree[fs::relative(f.path(), dir).generic_string()] = bytes.str();
      }
      Diagnostics diags;
      EXPECT_TRUE(ScanTreeForSecrets(tree, fs::relative(dir, NEMOC_SOURCE_DIR).string(), &diags))
          << RenderText(diags, {});
      files += tree.size();
      ++targets;
    }
  }
  std::printf("[ scanned  ] %zu generated files in %zu target directories\n", files, targets);
  EXPECT_GE(targets, 4u);
  EXPECT_GE(files, 30u);
}

// ---------------------------------------------------------------------------
// ScanTreeForSecrets.

TEST(SecretScannerTree, OneErrorPerFindingWithPathAndHint) {
  const std::string ngc = "nvapi-" + Fake(kUrlSafeChars, 64, 1);
  const std::string hf = "hf_" + Fake(kAlnumChars, 34, 4);
  const std::map<std::string, std::string> tree = {
      {"30-train/pytorchjob-x.yaml", "env:\n- name: A\n  value: " + ngc + "\n"},
      {"SUMMARY.md", "| Model | " + hf + " |\n"},
      {"kustomization.yaml", "resources: []\n"},
  };
  Diagnostics diags;
  EXPECT_FALSE(ScanTreeForSecrets(tree, "out/p/t/", &diags));
  ASSERT_EQ(diags.items().size(), 2u);
  const Diagnostic& summary = diags.items()[1];  // files in map order
  EXPECT_EQ(summary.location.file, "out/p/t/SUMMARY.md");
  EXPECT_EQ(summary.location.line, 1);
  EXPECT_EQ(summary.location.column, 11);
  EXPECT_EQ(summary.message,
            "HuggingFace token in generated output: specs reference Secrets by name, never by "
            "value");
  EXPECT_NE(summary.hint.find("hfTokenSecret"), std::string::npos) << summary.hint;
  EXPECT_NE(summary.hint.find("\"hf_" + hf.substr(3, 1) + "\xE2\x80\xA6\""), std::string::npos)
      << summary.hint;
  const Diagnostic& job = diags.items()[0];
  EXPECT_EQ(job.location.file, "out/p/t/30-train/pytorchjob-x.yaml");
  EXPECT_EQ(job.location.line, 3);
  EXPECT_EQ(job.location.column, 10);
  EXPECT_NE(job.hint.find("imagePullSecrets"), std::string::npos) << job.hint;
  EXPECT_NE(job.hint.find("\"nvap\xE2\x80\xA6\""), std::string::npos) << job.hint;
  // The rendered diagnostic never shows the value (no source text is given).
  const std::string rendered = RenderText(diags, {});
  EXPECT_EQ(rendered.find(ngc.substr(0, 8)), std::string::npos) << rendered;
  EXPECT_EQ(rendered.find(hf.substr(0, 8)), std::string::npos) << rendered;
}

TEST(SecretScannerTree, ShortValuesGetNoPreview) {
  Diagnostics diags;
  EXPECT_FALSE(ScanTreeForSecrets({{"a.yaml", "password: Zq8" "vK2m\n"}}, "out/p/t", &diags));
  ASSERT_EQ(diags.items().size(), 1u);
  EXPECT_EQ(diags.items()[0].hint.find("Zq8"), std::string::npos);
  EXPECT_EQ(diags.items()[0].location.file, "out/p/t/a.yaml");
}

TEST(SecretScannerTree, CleanTreeReturnsTrueAndAddsNothing) {
  Diagnostics diags;
  EXPECT_TRUE(ScanTreeForSecrets({{"a.yaml", "kind: Namespace\n"}, {"b.yaml", ""}}, "out/p/t",
                                 &diags));
  EXPECT_TRUE(diags.empty());
}

// The generated trees the scanner reads on every build are clean: no finding
// in the committed output of an example (its speed is a perftest).
TEST(SecretScannerTree, GeneratedYamlAndSummaryHaveNoFindings) {
  const auto files = test_inputs::CommittedTreeFiles("out/llama2-70b-sft/onprem");
  ASSERT_GT(files.size(), 5u);
  for (const auto& [file, bytes] : files) {
    ASSERT_FALSE(bytes.empty()) << file;
    EXPECT_TRUE(FindSecrets(bytes).empty()) << file;
  }
}

}  // namespace
}  // namespace nemoc
