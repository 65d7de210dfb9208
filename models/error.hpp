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

// parse_json_input()
//
// Parses a JSON document that a user writes (topology, parameter file, sweep spec, case
// file). Throws InputError naming `file` for malformed JSON (with the byte), for numbers
// JSON cannot hold, and for a key given twice in one object (with its path, e.g.
// links[3].lanes): JSON readers keep the last value silently, which would hide a typo.
nlohmann::json parse_json_input(std::istream& in, const std::string& file);
// The same, keeping the document's order of keys (a sweep's axes).
nlohmann::ordered_json parse_ordered_json_input(std::istream& in, const std::string& file);

}  // namespace composim
