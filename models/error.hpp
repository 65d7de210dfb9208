// File: models/error.hpp
//
// InputError is the one exception type for bad user input (a trace, a topology, a flag).
// Its message names the file, the place in it and what was expected, so the CLI can print
// it as one line and exit with status 2. Internal invariants use assert(), not this type.
#pragma once

#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace composim {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message, std::string reason = {})
      : std::runtime_error(message), reason_(reason.empty() ? message : std::move(reason)) {}
  // What is wrong, without the file and place (input_error()'s `what`); the whole message
  // where no such part was given.
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// input_error()
//
// Throws InputError with the message "<file>: <place>: <what>" (empty parts are omitted).
// Example: input_error("topo.json", "links[3]", "unknown node 'gpu9' in \"to\"");
[[noreturn]] void input_error(std::string_view file, std::string_view place, std::string_view what);

// The deepest nesting of arrays and objects accepted in a JSON input (the outermost
// container is level 1). nlohmann's parser is not recursive, but copying, comparing and
// printing a value are: 100,000 nested arrays in a 200 KB file overflowed the stack. No
// file composim reads nests beyond a handful of levels.
inline constexpr int kMaxJsonDepth = 512;

// json_nesting_error()
//
// Throws the InputError for a JSON input nested deeper than kMaxJsonDepth: "<file>: <place>:
// nesting deeper than 512 levels of arrays and objects". `place` is "byte N" where the
// reader knows it.
[[noreturn]] void json_nesting_error(std::string_view file, std::string_view place);

// shown_value()
//
// A value of an input as an error message quotes it: its JSON text, cut to `max`
// characters with "..." (a 100 KB value must not fill the terminal).
std::string shown_value(const nlohmann::json& v, std::size_t max = 80);
std::string shown_value(const nlohmann::ordered_json& v, std::size_t max = 80);
// The same for text (a key, a name): at most `max` characters, then "..."; control
// characters escaped (\n, \u001b) so that a message stays one line and inert.
std::string shown_text(std::string_view s, std::size_t max = 80);

// parse_json_input()
//
// Parses a JSON document that a user writes (topology, parameter file, sweep spec, case
// file, workload IR). Throws InputError naming `file` for malformed JSON (with the byte),
// for nesting deeper than kMaxJsonDepth (with the byte where the stream can tell it), for
// numbers JSON cannot hold, and for a key given twice in one object (with its path, e.g.
// links[3].lanes): JSON readers keep the last value silently, which would hide a typo.
nlohmann::json parse_json_input(std::istream& in, const std::string& file);
// The same, keeping the document's order of keys (a sweep's axes).
nlohmann::ordered_json parse_ordered_json_input(std::istream& in, const std::string& file);

// reject_text_after_nul()
//
// nlohmann's parser ends its input at a NUL byte, dropping whatever follows. Reads the rest
// of `rest` and throws InputError naming `file` and `place` (where the NUL was) if anything
// but whitespace and NUL bytes follows.
void reject_text_after_nul(std::streambuf& rest, std::string_view file, std::string_view place);

}  // namespace composim
