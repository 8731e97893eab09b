#include "pbtxt_emitter.h"

#include <vector>

#include "yaml_emitter.h"

namespace nemoc {

namespace {

bool IsIdentifier(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool IsEnum(const nlohmann::json& v) { return v.is_object() && v.size() == 1 && v.contains("$enum"); }

bool IsMessage(const nlohmann::json& v) { return v.is_object() && !IsEnum(v); }

bool Scalar(const nlohmann::json& v, const std::string& where, std::string* out, std::string* err) {
  if (IsEnum(v)) {
    const auto& name = v["$enum"];
    if (!name.is_string() || !IsIdentifier(name.get<std::string>())) {
      *err = where + ": an enum value must be an identifier";
      return false;
    }
    *out += name.get<std::string>();
  } else if (v.is_string()) {
    *out += QuotePbtxt(v.get<std::string>());
  } else if (v.is_boolean()) {
    *out += v.get<bool>() ? "true" : "false";
  } else if (v.is_number_integer()) {
    *out += v.dump();
  } else if (v.is_number_float()) {
    *out += FormatNumber(v.get<double>());
  } else {
    *err = where + ": " + (v.is_null() ? std::string("null") : std::string("this value")) +
           " has no protobuf text form";
    return false;
  }
  return true;
}

bool Message(const nlohmann::json& message, int depth, const std::string& where, std::string* out,
             std::string* err);

bool Field(const std::string& key, const nlohmann::json& value, int depth, const std::string& where,
           std::string* out, std::string* err) {
  const std::string indent(2 * depth, ' ');
  const std::string path = where.empty() ? key : where + "." + key;
  if (!IsIdentifier(key)) {
    *err = path + ": not a protobuf field name";
    return false;
  }
  if (IsMessage(value)) {
    *out += indent + key + " {\n";
    if (!Message(value, depth + 1, path, out, err)) return false;
    *out += indent + "}\n";
    return true;
  }
  if (!value.is_array()) {
    *out += indent + key + ": ";
    if (!Scalar(value, path, out, err)) return false;
    *out += "\n";
    return true;
  }
  if (value.empty()) {
    *out += indent + key + ": []\n";
    return true;
  }
  size_t messages = 0;
  for (const auto& item : value) {
    if (item.is_array()) {
      *err = path + ": nested arrays have no protobuf text form";
      return false;
    }
    if (IsMessage(item)) ++messages;
  }
  if (messages != 0 && messages != value.size()) {
    *err = path + ": an array mixes messages and scalars";
    return false;
  }
  if (messages == 0) {
    *out += indent + key + ": [";
    for (size_t i = 0; i < value.size(); ++i) {
      if (i > 0) *out += ", ";
      if (!Scalar(value[i], path + "[" + std::to_string(i) + "]", out, err)) return false;
    }
    *out += "]\n";
    return true;
  }
  *out += indent + key + " [\n";
  for (size_t i = 0; i < value.size(); ++i) {
    *out += indent + "  {\n";
    if (!Message(value[i], depth + 2, path + "[" + std::to_string(i) + "]", out, err)) return false;
    *out += indent + "  }" + (i + 1 < value.size() ? ",\n" : "\n");
  }
  *out += indent + "]\n";
  return true;
}

bool Message(const nlohmann::json& message, int depth, const std::string& where, std::string* out,
             std::string* err) {
  // `name` first (how Triton's documentation writes every config), then byte order.
  std::vector<std::string> keys;
  if (message.contains("name")) keys.push_back("name");
  for (const auto& [key, _] : message.items()) {
    if (key != "name") keys.push_back(key);
  }
  for (const auto& key : keys) {
    if (!Field(key, message[key], depth, where, out, err)) return false;
  }
  return true;
}

}  // namespace

std::string QuotePbtxt(std::string_view s) {
  static const char kOctal[] = "01234567";
  std::string out = "\"";
  for (const char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          out += '\\';
          out += kOctal[(byte >> 6) & 7];
          out += kOctal[(byte >> 3) & 7];
          out += kOctal[byte & 7];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

bool EmitPbtxt(const nlohmann::json& message, std::string* out, std::string* err) {
  if (!IsMessage(message)) {
    *err = "a protobuf text document must be a message (a JSON object)";
    return false;
  }
  std::string text;
  if (!Message(message, 0, "", &text, err)) return false;
  *out = std::move(text);
  return true;
}

}  // namespace nemoc
