// A small protobuf text-format reader for tests only: it reads back what
// compiler/pbtxt_emitter.cc writes (and Triton's hand-written configs) into
// the same JSON shape the emitter takes, so tests can check a config.pbtxt by
// parsing it instead of comparing strings. Enum identifiers come back as
// {"$enum": NAME}; a field given more than once becomes an array, as does
// list syntax. Fails (returns false with *err) on anything it does not know.
#ifndef NEMOC_TESTS_PBTXT_TEST_PARSER_H_
#define NEMOC_TESTS_PBTXT_TEST_PARSER_H_

#include <cctype>
#include <string>

#include <nlohmann/json.hpp>

namespace nemoc::testing {

class PbtxtTestParser {
 public:
  explicit PbtxtTestParser(std::string text) : s_(std::move(text)) {}

  bool Parse(nlohmann::json* out, std::string* err) {
    nlohmann::json message = nlohmann::json::object();
    if (!Fields(&message, /*closing=*/'\0')) {
      *err = err_ + " at offset " + std::to_string(pos_);
      return false;
    }
    *out = std::move(message);
    return true;
  }

 private:
  void Skip() {
    while (pos_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[pos_]))) {
        ++pos_;
      } else if (s_[pos_] == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  bool Fail(const std::string& what) {
    err_ = what;
    return false;
  }
  bool Identifier(std::string* id) {
    Skip();
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    if (start == pos_ || std::isdigit(static_cast<unsigned char>(s_[start]))) return Fail("expected an identifier");
    *id = s_.substr(start, pos_ - start);
    return true;
  }
  bool String(nlohmann::json* out) {
    const char quote = s_[pos_++];
    std::string value;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      char c = s_[pos_++];
      if (c == '\n') return Fail("newline in a string");
      if (c != '\\') {
        value += c;
        continue;
      }
      if (pos_ >= s_.size()) return Fail("unfinished escape");
      c = s_[pos_++];
      if (c == 'n') value += '\n';
      else if (c == 'r') value += '\r';
      else if (c == 't') value += '\t';
      else if (c == '"' || c == '\'' || c == '\\') value += c;
      else if (c >= '0' && c <= '7') {
        int code = c - '0';
        for (int i = 0; i < 2 && pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '7'; ++i) code = code * 8 + (s_[pos_++] - '0');
        value += static_cast<char>(code);
      } else {
        return Fail(std::string("unknown escape \\") + c);
      }
    }
    if (pos_ >= s_.size()) return Fail("unterminated string");
    ++pos_;
    *out = value;
    return true;
  }
  bool Scalar(nlohmann::json* out) {
    Skip();
    if (pos_ >= s_.size()) return Fail("expected a value");
    const char c = s_[pos_];
    if (c == '"' || c == '\'') return String(out);
    if (c == '-' || c == '.' || std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      ++pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
                                  ((s_[pos_] == '-' || s_[pos_] == '+') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E')))) {
        ++pos_;
      }
      const std::string number = s_.substr(start, pos_ - start);
      nlohmann::json parsed = nlohmann::json::parse(number, nullptr, false);
      if (parsed.is_discarded() || !parsed.is_number()) return Fail("bad number " + number);
      *out = parsed;
      return true;
    }
    std::string id;
    if (!Identifier(&id)) return false;
    if (id == "true" || id == "false") *out = id == "true";
    else *out = {{"$enum", id}};
    return true;
  }
  bool Value(nlohmann::json* out) {
    Skip();
    if (pos_ < s_.size() && (s_[pos_] == '{' || s_[pos_] == '<')) {
      const char closing = s_[pos_] == '{' ? '}' : '>';
      ++pos_;
      *out = nlohmann::json::object();
      return Fields(out, closing);
    }
    return Scalar(out);
  }
  // A field given again becomes (or extends) an array.
  void Add(nlohmann::json* message, const std::string& key, nlohmann::json value) {
    if (!message->contains(key)) {
      (*message)[key] = std::move(value);
      return;
    }
    nlohmann::json& existing = (*message)[key];
    if (!existing.is_array()) existing = nlohmann::json::array({existing});
    existing.push_back(std::move(value));
  }
  bool Fields(nlohmann::json* message, char closing) {
    while (true) {
      Skip();
      if (pos_ >= s_.size()) {
        if (closing == '\0') return true;
        return Fail(std::string("missing '") + closing + "'");
      }
      if (s_[pos_] == closing) {
        ++pos_;
        return true;
      }
      std::string key;
      if (!Identifier(&key)) return false;
      Skip();
      bool colon = false;
      if (pos_ < s_.size() && s_[pos_] == ':') {
        colon = true;
        ++pos_;
        Skip();
      }
      if (pos_ < s_.size() && s_[pos_] == '[') {
        ++pos_;
        nlohmann::json list = nlohmann::json::array();
        Skip();
        if (pos_ < s_.size() && s_[pos_] == ']') {
          ++pos_;
        } else {
          while (true) {
            nlohmann::json item;
            if (!Value(&item)) return false;
            list.push_back(std::move(item));
            Skip();
            if (pos_ < s_.size() && s_[pos_] == ',') {
              ++pos_;
              continue;
            }
            if (pos_ < s_.size() && s_[pos_] == ']') {
              ++pos_;
              break;
            }
            return Fail("expected ',' or ']'");
          }
        }
        if (message->contains(key) && !(*message)[key].is_array()) (*message)[key] = nlohmann::json::array({(*message)[key]});
        if (!message->contains(key)) (*message)[key] = nlohmann::json::array();
        for (auto& v : list) (*message)[key].push_back(v);
      } else {
        if (!colon && !(pos_ < s_.size() && (s_[pos_] == '{' || s_[pos_] == '<'))) return Fail("expected ':' after " + key);
        nlohmann::json value;
        if (!Value(&value)) return false;
        Add(message, key, std::move(value));
      }
      Skip();
      if (pos_ < s_.size() && (s_[pos_] == ',' || s_[pos_] == ';')) ++pos_;
    }
  }

  std::string s_;
  size_t pos_ = 0;
  std::string err_;
};

inline bool ParsePbtxtForTest(const std::string& text, nlohmann::json* out, std::string* err) {
  return PbtxtTestParser(text).Parse(out, err);
}

}  // namespace nemoc::testing

#endif  // NEMOC_TESTS_PBTXT_TEST_PARSER_H_
