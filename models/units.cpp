#include "models/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

namespace composim {
namespace {

struct NumberAndSuffix {
  double value;
  std::string suffix;
};

NumberAndSuffix split(std::string_view text, std::string_view expected) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || !std::isfinite(value) || value < 0)
    throw std::invalid_argument("cannot read '" + std::string(text) + "' as " + std::string(expected));
  std::string suffix(ptr, text.data() + text.size());
  while (!suffix.empty() && suffix.front() == ' ') suffix.erase(0, 1);
  return {value, suffix};
}

double prefix_factor(std::string& s) {
  static constexpr struct {
    const char* p;
    double f;
  } kPrefixes[] = {{"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
                   {"k", 1e3},     {"K", 1e3},         {"M", 1e6},           {"G", 1e9},
                   {"T", 1e12}};
  for (const auto& [p, f] : kPrefixes) {
    std::string_view pv(p);
    if (s.size() > pv.size() && s.compare(0, pv.size(), pv) == 0) {
      s.erase(0, pv.size());
      return f;
    }
  }
  return 1.0;
}

}  // namespace

double parse_duration_s(std::string_view text) {
  auto [v, s] = split(text, "a duration such as 24us, 1.5ms or 2s");
  static constexpr struct {
    const char* u;
    double f;
  } kUnits[] = {{"ns", 1e-9}, {"us", 1e-6}, {"µs", 1e-6}, {"ms", 1e-3}, {"s", 1.0}, {"", 1.0}};
  for (const auto& [u, f] : kUnits)
    if (s == u) return v * f;
  throw std::invalid_argument("cannot read '" + std::string(text) + "' as a duration such as 24us, 1.5ms or 2s");
}

std::uint64_t parse_bytes(std::string_view text) {
  auto [v, s] = split(text, "a size such as 4096, 64KiB or 1GB");
  double f = prefix_factor(s);
  if (s != "B" && s != "") throw std::invalid_argument("cannot read '" + std::string(text) + "' as a size such as 4096, 64KiB or 1GB");
  double bytes = v * f;
  if (bytes > 1.8e19 || std::floor(bytes) != bytes)
    throw std::invalid_argument("'" + std::string(text) + "' is not a whole number of bytes");
  return static_cast<std::uint64_t>(bytes);
}

double parse_bandwidth_Bps(std::string_view text) {
  auto [v, s] = split(text, "a bandwidth such as 12GB/s or 100Gbps");
  double f = prefix_factor(s);
  if (s == "B/s" || s == "Bps" || s == "") return v * f;
  if (s == "b/s" || s == "bps") return v * f / 8.0;
  throw std::invalid_argument("cannot read '" + std::string(text) + "' as a bandwidth such as 12GB/s or 100Gbps");
}

double parse_rate_GTps(std::string_view text) {
  auto [v, s] = split(text, "a transfer rate such as 16GT/s");
  if (s == "GT/s" || s == "GTps" || s == "") return v;
  throw std::invalid_argument("cannot read '" + std::string(text) + "' as a transfer rate such as 16GT/s");
}

}  // namespace composim
