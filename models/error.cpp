#include "models/error.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <istream>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

namespace composim {

void input_error(std::string_view file, std::string_view place, std::string_view what) {
  std::string msg;
  if (!file.empty()) msg.append(file).append(": ");
  if (!place.empty()) msg.append(place).append(": ");
  msg.append(what);
  throw InputError(msg, std::string(what));
}

void json_nesting_error(std::string_view file, std::string_view place) {
  input_error(file, place, "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels of arrays and objects");
}

std::string shown_text(std::string_view s, std::size_t max) {
  // Control characters (a newline, a terminal escape) would break the one-line message or
  // act on the terminal: shown escaped, as JSON writes them.
  std::string out;
  for (const char ch : s.substr(0, std::min(max, s.size()))) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '\n') out += "\\n";
    else if (ch == '\t') out += "\\t";
    else if (ch == '\r') out += "\\r";
    else if (u < 0x20 || u == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", u);
      out += b;
    } else out += ch;
  }
  return s.size() <= max ? out : out + "...";
}

std::string shown_value(const nlohmann::json& v, std::size_t max) { return shown_text(v.dump(), max); }
std::string shown_value(const nlohmann::ordered_json& v, std::size_t max) { return shown_text(v.dump(), max); }

void reject_text_after_nul(std::streambuf& rest, std::string_view file, std::string_view place) {
  for (int c; (c = rest.sbumpc()) != std::char_traits<char>::eof();)
    if (!std::isspace(c) && c != 0) input_error(file, place, "data after the end of the JSON text (a NUL byte, then more): not one JSON document");
}

namespace {
template <class json>
json parse_checked(std::istream& in, const std::string& file) {
  // The containers being read, outermost first: an object's keys so far and its current
  // key, or an array's current index; they make the path of a repeated key.
  struct Frame {
    bool array = false;
    long index = -1;
    std::string key;
    std::set<std::string> keys;
  };
  std::vector<Frame> open;
  auto path = [&] {
    std::string p;
    for (const auto& f : open) p += f.array ? "[" + std::to_string(f.index) + "]" : (p.empty() ? "" : ".") + f.key;
    return p;
  };
  auto element = [&] {
    if (!open.empty() && open.back().array) ++open.back().index;
  };
  // Where the parser is: the bytes it has read (the last one opens the level), counted as
  // its own errors count them; empty for a stream that cannot tell (a pipe).
  auto byte = [&]() -> std::string {
    const auto pos = in.rdbuf()->pubseekoff(0, std::ios_base::cur, std::ios_base::in);
    return pos < 0 ? std::string() : "byte " + std::to_string(static_cast<long long>(pos));
  };
  const typename json::parser_callback_t check = [&](int depth, nlohmann::detail::parse_event_t event, json& parsed) {
    switch (event) {
      case nlohmann::detail::parse_event_t::object_start:
      case nlohmann::detail::parse_event_t::array_start:
        // `depth` counts the containers around this one. Copying or printing a deeper value
        // would overflow the stack.
        if (depth >= kMaxJsonDepth) {
          const std::string at = byte();
          json_nesting_error(file, at.empty() ? shown_text(path(), 80) : at);
        }
        element();
        open.push_back({event == nlohmann::detail::parse_event_t::array_start, -1, {}, {}});
        break;
      case nlohmann::detail::parse_event_t::object_end:
      case nlohmann::detail::parse_event_t::array_end:
        if (!open.empty()) open.pop_back();
        break;
      case nlohmann::detail::parse_event_t::key: {
        Frame& f = open.back();
        f.key = parsed.template get<std::string>();
        if (!f.keys.insert(f.key).second)
          input_error(file, shown_text(path(), 200), "the key \"" + shown_text(f.key) + "\" is given twice in this object");
        break;
      }
      case nlohmann::detail::parse_event_t::value:
        element();
        break;
    }
    return true;
  };
  try {
    json doc = json::parse(in, check);
    const auto nul_end = in.rdbuf()->pubseekoff(0, std::ios_base::cur, std::ios_base::in);  // just after the NUL, if one ended it
    reject_text_after_nul(*in.rdbuf(), file, nul_end > 0 ? "byte " + std::to_string(static_cast<long long>(nul_end) - 1) : std::string("end"));
    return doc;
  } catch (const typename json::parse_error& e) {
    input_error(file, "byte " + std::to_string(e.byte), std::string("malformed JSON: ") + e.what());
  } catch (const typename json::exception& e) {  // e.g. a number too large for a double
    // The parser gives no position for these; the containers read so far say where.
    input_error(file, shown_text(path(), 200), std::string("unreadable JSON: ") + e.what());
  }
}
}  // namespace

nlohmann::json parse_json_input(std::istream& in, const std::string& file) { return parse_checked<nlohmann::json>(in, file); }

nlohmann::ordered_json parse_ordered_json_input(std::istream& in, const std::string& file) {
  return parse_checked<nlohmann::ordered_json>(in, file);
}

}  // namespace composim
