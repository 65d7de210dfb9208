// File: models/units.hpp
//
// Parsing of human-written quantities, done once at the edge (CLI flags, JSON values that
// are strings). Everything inside composim is SI: seconds, bytes, bytes/s.
//
//   parse_duration_s("24us")      -> 2.4e-5
//   parse_bytes("1GiB")           -> 1073741824
//   parse_bandwidth_Bps("12GB/s") -> 1.2e10     ("100Gbps" -> 1.25e10)
//   parse_rate_GTps("16GT/s")     -> 16
//
// Decimal prefixes (k, M, G, T) are powers of 1000; binary ones (Ki, Mi, Gi, Ti) powers of
// 1024. A bare number is taken in the base unit. Each throws std::invalid_argument naming
// the text and the expected form when the text does not parse.
#pragma once

#include <cstdint>
#include <string_view>

namespace composim {

double parse_duration_s(std::string_view text);
std::uint64_t parse_bytes(std::string_view text);
double parse_bandwidth_Bps(std::string_view text);
double parse_rate_GTps(std::string_view text);

}  // namespace composim
