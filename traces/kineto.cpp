#include "traces/kineto.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <istream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <streambuf>
#include <string_view>
#include <unordered_set>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "models/error.hpp"
#include "traces/workload_json.hpp"

namespace composim::trace {

// Trace DOMs keep each object's keys in a vector (ordered_json) rather than a std::map: a
// trace event has about ten keys, and a vector of them takes a third of the map's memory.
using json = nlohmann::ordered_json;

namespace {

// The decompressed bytes of a plain or gzip file, read in blocks as the parser asks for
// them: the text is never held whole (a 2 GiB gzip of blanks took 8 GB when it was).
// A file that starts with gzip's magic bytes is inflated; it may hold several gzip members
// one after another (RFC 1952 2.2; `cat a.gz b.gz`), read as one text, but nothing else
// after them (zlib's gzread ignores such bytes; gzip -t warns of them). Errors (corrupt or
// truncated gzip, bytes after the last member) are thrown from underflow() as InputError,
// and the JSON parser passes them on.
class GzStreamBuf : public std::streambuf {
 public:
  explicit GzStreamBuf(const std::string& path) : path_(path) {
    file_ = std::fopen(path.c_str(), "rb");
    if (!file_) input_error(path, "", std::string("cannot open for reading: ") + std::strerror(errno));
    try {  // the destructor does not run for a constructor that throws
      refill();
      gzip_ = z_.avail_in >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
      if (gzip_ && inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) {
        gzip_ = false;
        input_error(path, "", "cannot start zlib's inflate (out of memory)");
      }
    } catch (...) {
      std::fclose(file_);
      throw;
    }
    in_member_ = gzip_;
  }
  ~GzStreamBuf() override {
    if (gzip_) inflateEnd(&z_);
    if (file_) std::fclose(file_);
  }
  GzStreamBuf(const GzStreamBuf&) = delete;
  GzStreamBuf& operator=(const GzStreamBuf&) = delete;

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const size_t n = gzip_ ? inflate_some() : plain_some();
    if (n == 0) return traits_type::eof();
    consumed_ += n;
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(*gptr());
  }

 public:
  // Decompressed bytes read from this buffer so far (the parser reads one at a time).
  size_t position() const { return consumed_ - static_cast<size_t>(egptr() - gptr()); }

 private:
  // Keeps the unread input and appends what the file has next, up to sizeof in_. False when
  // nothing was added (end of file).
  bool refill() {
    if (z_.avail_in > 0 && z_.next_in != in_) std::memmove(in_, z_.next_in, z_.avail_in);
    z_.next_in = in_;
    const size_t got = std::fread(in_ + z_.avail_in, 1, sizeof in_ - z_.avail_in, file_);
    if (got == 0 && std::ferror(file_)) input_error(path_, "byte " + std::to_string(file_read_) + " of the file", std::string("read error: ") + std::strerror(errno));
    z_.avail_in += static_cast<uInt>(got);
    file_read_ += got;
    return got > 0;
  }

  // Offset in the file of the next compressed byte inflate has not taken.
  size_t compressed_offset() const { return file_read_ - z_.avail_in; }

  size_t plain_some() {
    // The first block was read into in_ to look for gzip's magic bytes: hand it over first.
    if (z_.avail_in > 0) {
      const uInt n = std::min<uInt>(z_.avail_in, sizeof buf_);
      std::memcpy(buf_, z_.next_in, n);
      z_.next_in += n;
      z_.avail_in -= n;
      return n;
    }
    const size_t n = std::fread(buf_, 1, sizeof buf_, file_);
    if (n == 0 && std::ferror(file_)) input_error(path_, "byte " + std::to_string(consumed_), std::string("read error: ") + std::strerror(errno));
    return n;
  }

  size_t inflate_some() {
    for (;;) {
      if (!in_member_) {
        // Between members: the end of the file, another member, or bytes that are neither.
        if (z_.avail_in < 2) refill();
        if (z_.avail_in == 0) return 0;
        if (z_.avail_in < 2 || z_.next_in[0] != 0x1f || z_.next_in[1] != 0x8b)
          input_error(path_, "compressed byte " + std::to_string(compressed_offset()) + " (after byte " + std::to_string(consumed_) + " of the decompressed data)",
                      "bytes after the end of the gzip data that are not another gzip member (a damaged or appended-to file; gzip -t calls them trailing garbage)");
        inflateReset(&z_);
        in_member_ = true;
      }
      if (z_.avail_in == 0 && !refill())
        input_error(path_, "byte " + std::to_string(consumed_) + " of the decompressed data",
                    "truncated gzip file (the file ends at compressed byte " + std::to_string(file_read_) + ", inside a gzip member)");
      z_.next_out = reinterpret_cast<Bytef*>(buf_);
      z_.avail_out = sizeof buf_;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      const size_t produced = sizeof buf_ - z_.avail_out;
      if (rc == Z_STREAM_END)
        in_member_ = false;
      else if (rc != Z_OK && rc != Z_BUF_ERROR)
        // Decompressed bytes are read in blocks of sizeof buf_: the damage lies in the block
        // after `consumed_`, up to the compressed byte inflate had read.
        input_error(path_, "after byte " + std::to_string(consumed_) + " of the decompressed data (compressed byte " + std::to_string(compressed_offset()) + " read)",
                    "corrupt or truncated gzip data (" + std::string(z_.msg ? z_.msg : zError(rc)) + ")");
      if (produced > 0) return produced;
    }
  }

  std::string path_;
  std::FILE* file_ = nullptr;
  z_stream z_{};
  bool gzip_ = false, in_member_ = false;
  unsigned char in_[1 << 17];
  char buf_[1 << 16];
  size_t consumed_ = 0, file_read_ = 0;
};

}  // namespace

std::string read_maybe_gzip(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) input_error(path, "", "is a directory, not a trace file");
  GzStreamBuf buf(path);
  return std::string(std::istreambuf_iterator<char>(&buf), std::istreambuf_iterator<char>());
}

namespace {

struct RawGpu {
  const json* ev;
  GpuOpKind kind;
  int device;
  std::int64_t stream;
  std::int64_t correlation;
  std::int64_t ts_ns, dur_ns;
};

struct RawCall {
  const json* ev;
  std::int32_t thread;
  std::int64_t correlation;
  std::int64_t ts_ns, dur_ns;
};

std::string id_string(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) return std::to_string(static_cast<std::int64_t>(v.get<double>()));
  return "?";
}

// An id given exactly: a JSON integer, a whole number, or a string of decimal digits (an
// optional '-' first); nullopt otherwise (absent, "77abc", "0x4d", 77.5, beyond int64), so
// unreadable ids match nothing rather than each other.
std::optional<std::int64_t> exact_id(const json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const auto v = it->get<std::uint64_t>();
    return v <= static_cast<std::uint64_t>(INT64_MAX) ? std::optional<std::int64_t>(static_cast<std::int64_t>(v)) : std::nullopt;
  }
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_number_float()) {
    const double v = it->get<double>();
    return std::isfinite(v) && std::abs(v) < 9e15 && std::floor(v) == v ? std::optional<std::int64_t>(static_cast<std::int64_t>(v)) : std::nullopt;
  }
  if (!it->is_string()) return std::nullopt;
  const std::string& t = it->get_ref<const std::string&>();
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);  // decimal digits, '-' first at most
  return ec == std::errc() && end == t.data() + t.size() ? std::optional<std::int64_t>(v) : std::nullopt;
}

std::int64_t get_int(const json& args, const char* key, std::int64_t def = -1) {
  auto it = args.find(key);
  if (it == args.end()) return def;
  if (it->is_number_integer()) return it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX) ? def : it->get<std::int64_t>();
  if (it->is_number_float()) {  // whole and in range, or not an id
    const double v = it->get<double>();
    return std::isfinite(v) && std::abs(v) < 9e18 && std::floor(v) == v ? static_cast<std::int64_t>(v) : def;
  }
  if (it->is_string()) {
    try {
      return std::stoll(it->get<std::string>());
    } catch (...) {
      return def;
    }
  }
  return def;
}

std::string get_str(const json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

// A string arg lowered ("Collective name": PyTorch writes "send", other tools "Send").
std::string lowered_str(const json& args, const char* key) {
  std::string t = get_str(args, key);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return t;
}

// A "Process Group Ranks" value: a list of ranks, as PyTorch writes it ("[0, 1, 2, 3]").
// PyTorch cuts lists longer than 30 ranks ("[0, 1, ..., 29, ...]"); `truncated` says so,
// and `ranks` then holds the ranks shown. Returns false for anything else (a minus sign,
// words, a list that does not close).
bool parse_rank_list(const std::string& s, std::vector<int>& ranks, bool* truncated = nullptr) {
  ranks.clear();
  auto rtrim = [](std::string& t) {
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  };
  std::string text = s;
  rtrim(text);
  bool cut = false;
  if (!text.empty() && text.back() == ']') {
    std::string inner = text.substr(0, text.size() - 1);
    rtrim(inner);
    if (inner.ends_with("...")) {  // "[0, 1, ..., 29, ...]" -> "[0, 1, ..., 29]"
      cut = true;
      inner.erase(inner.size() - 3);
      rtrim(inner);
      if (!inner.empty() && inner.back() == ',') inner.pop_back();
      text = inner + "]";
    }
  }
  if (truncated) *truncated = cut;
  // One list of numbers: nested lists are not ranks (and are not parsed, however deep).
  if (std::count(text.begin(), text.end(), '[') != 1 || text.find('{') != std::string::npos) return false;
  const json list = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) return false;
  for (const auto& r : list) {
    if (!r.is_number_integer() || r.get<std::int64_t>() < 0 || r.get<std::int64_t>() > 100'000'000) return false;
    ranks.push_back(static_cast<int>(r.get<std::int64_t>()));
  }
  return true;
}

// Whether two rank lists name the same ranks, in any order.
bool same_members(std::vector<int> a, std::vector<int> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

// The members of a group of `group_size` ranks of which the trace shows a truncated list:
// the shown ranks continued with their stride (groups are contiguous or strided blocks),
// or nothing (unknown) when they do not form one.
std::vector<int> complete_rank_list(const std::vector<int>& shown, std::int64_t group_size) {
  if (group_size == static_cast<std::int64_t>(shown.size())) return shown;
  if (shown.size() < 2 || group_size < static_cast<std::int64_t>(shown.size())) return {};
  const int stride = shown[1] - shown[0];
  if (stride <= 0) return {};
  for (size_t k = 1; k < shown.size(); ++k)
    if (shown[k] - shown[k - 1] != stride) return {};
  std::vector<int> all;
  for (std::int64_t k = 0; k < group_size; ++k) all.push_back(shown[0] + static_cast<int>(k) * stride);
  return all;
}

CopyKind copy_kind_of(const std::string& name) {
  if (name.find("HtoD") != std::string::npos) return CopyKind::htod;
  if (name.find("DtoH") != std::string::npos) return CopyKind::dtoh;
  if (name.find("DtoD") != std::string::npos) return CopyKind::dtod;
  if (name.find("PtoP") != std::string::npos || name.find("Peer") != std::string::npos) return CopyKind::ptop;
  if (name.find("HtoH") != std::string::npos) return CopyKind::htoh;
  return CopyKind::dtod;
}

// Number-valued field of an event, checked: finite, in [min, max]. Names the event on error.
std::string fmt_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

double checked_number(const json& e, const char* key, const std::string& path, size_t index, double min, double max) {
  auto it = e.find(key);
  const std::string place = "traceEvents[" + std::to_string(index) + "]" +
                            (e.contains("name") && e["name"].is_string() ? " (\"" + e["name"].get<std::string>().substr(0, 60) + "\")" : "");
  if (it == e.end()) input_error(path, place, std::string("missing \"") + key + "\"");
  if (!it->is_number()) input_error(path, place, std::string("\"") + key + "\" must be a number");
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < min || v > max)
    input_error(path, place, std::string("\"") + key + "\" = " + shown_value(*it) + " is out of range (expected microseconds in [" + fmt_g(min) + ", " + fmt_g(max) + "])");
  return v;
}

// Integer field `key` of `obj`, checked: an integer, a whole float or a numeric string, in
// [min, max]; `def` if absent. Names `place` on error.
std::int64_t checked_int(const json& obj, const char* key, const std::string& path, const std::string& place, std::int64_t def,
                         std::int64_t min, std::int64_t max) {
  auto it = obj.find(key);
  if (it == obj.end()) return def;
  std::int64_t v = 0;
  bool ok = false;
  if (it->is_number_integer()) {
    ok = !(it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX));
    v = it->get<std::int64_t>();
  } else if (it->is_number_float() && std::isfinite(it->get<double>()) && std::abs(it->get<double>()) < 9e18 &&
             std::floor(it->get<double>()) == it->get<double>()) {
    ok = true;
    v = static_cast<std::int64_t>(it->get<double>());
  } else if (it->is_string()) {
    const std::string& str = it->get_ref<const std::string&>();
    char* end = nullptr;
    errno = 0;
    long long x = std::strtoll(str.c_str(), &end, 10);
    ok = !str.empty() && *end == '\0' && errno == 0;
    v = x;
  }
  const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (!ok) input_error(path, place, std::string("\"") + key + "\" = " + shown_value(*it) + " is not an integer in " + range);
  if (v < min || v > max) input_error(path, place, std::string("\"") + key + "\" = " + shown_value(*it) + " is out of range " + range);
  return v;
}

// Integer arg of a GPU event (device, stream, bytes), checked.
std::int64_t checked_arg(const json& args, const char* key, const std::string& path, size_t index, std::int64_t def,
                         std::int64_t min, std::int64_t max) {
  return checked_int(args, key, path, "traceEvents[" + std::to_string(index) + "].args", def, min, max);
}

constexpr double kMaxUs = 1e12;  // 11.6 days in microseconds

// Whether the importer reads a trace event (pass 1 of kineto_from_json skips the others):
// complete ("X") events of the GPU, CUDA call, sync and ProfilerStep categories. Dropping
// the rest while parsing (cpu_op, python_function, ac2g flows: two thirds of a typical
// trace) keeps their JSON out of memory.
bool event_is_read(const json& e) {
  auto ph = e.find("ph");
  if (ph == e.end() || !ph->is_string()) return true;  // not an event: pass 1 says what is wrong
  if (ph->get_ref<const std::string&>() != "X") return false;
  auto cat = e.find("cat");
  if (cat == e.end() || !cat->is_string()) return false;
  static const std::set<std::string> kRead = {"kernel",      "Kernel",  "gpu_memcpy",  "Memcpy",   "gpu_memset",
                                              "Memset",      "cuda_runtime", "Runtime", "cuda_driver", "cuda_sync"};
  const std::string& c = cat->get_ref<const std::string&>();
  if (kRead.count(c)) return true;
  if (c != "user_annotation" && c != "Operator" && c != "cpu_op") return false;
  auto name = e.find("name");
  // PyTorch's record_param_comms: a send's or receive's peer where the kernel lacks it.
  if (c == "cpu_op" && name != e.end() && name->is_string() && name->get_ref<const std::string&>() == "record_param_comms") return true;
  // Kept too where the name is not a string: pass 2 refuses it (a step mark named 7 would
  // silently be no step).
  return name != e.end() && (!name->is_string() || name->get_ref<const std::string&>().rfind("ProfilerStep#", 0) == 0);
}

// The key under which TraceDomBuilder keeps an event's exact "ts" in nanoseconds (an int64);
// it starts with a NUL, which no key read from a file can (NUL bytes there are errors).
const std::string kExactTsKey("\0ts_ns", 6);

// The integer nanoseconds of a decimal number of microseconds written without an exponent
// ("1712195495519689.047"), rounded half away from zero beyond the third decimal; nullopt
// for another form or beyond 9.2e15 us (the caller falls back to the double).
std::optional<std::int64_t> exact_ns_of_decimal(std::string_view text) {
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  const auto dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  auto digits = [](std::string_view d) { return std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; }); };
  if (whole.empty() || whole.size() > 16 || !digits(whole) || !digits(fraction)) return std::nullopt;
  std::int64_t ns = 0;
  for (char c : whole) ns = ns * 10 + (c - '0');
  if (ns > (INT64_MAX - 1000) / 1000) return std::nullopt;
  for (size_t k = 0; k < 3; ++k) ns = ns * 10 + (k < fraction.size() ? fraction[k] - '0' : 0);
  if (fraction.size() > 3 && fraction[3] >= '5') ++ns;
  return negative ? -ns : ns;
}

// The args of a trace event that the importer reads (kineto_from_json); the others (a
// kernel's grid, block, registers, occupancy, External id, ...) are dropped while parsing.
// A key added to the importer must be added here.
const std::set<std::string, std::less<>> kArgsRead = {
    "correlation",     "stream",         "device",     "bytes",      "wait_on_stream",      "wait_on_cuda_event_record_corr_id",
    "Collective name", "dtype",          "Group size", "In msg nelems", "Out msg nelems", "Process Group Name",
    "Process Group Ranks", "Dst Rank",       "Src Rank",   "External id", "Seq"};

// A DOM builder for nlohmann's SAX parser that keeps only what the importer reads: an event
// it does not read becomes an empty object as soon as it is parsed, so that the others keep
// their index (errors name traceEvents[i]) and its keys leave memory; in the events it
// keeps, args it does not read (kArgsRead) are never stored. Parse errors are kept (byte
// and message) for the caller to report.
class TraceDomBuilder : public nlohmann::json_sax<json> {
 public:
  explicit TraceDomBuilder(const GzStreamBuf& in) : in_(in) {}
  json root;
  std::size_t error_byte = 0;
  std::string error;
  bool malformed = false;  // a syntax error (else an unreadable value, e.g. 1e400)
  bool too_deep = false;   // nested deeper than kMaxJsonDepth (error_byte: where)

  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return put(v); }
  bool number_unsigned(number_unsigned_t v) override { return put(v); }
  bool number_float(number_float_t v, const string_t& text) override {
    if (!put(v)) return false;
    // An event's "ts" in microseconds with a fraction (Kineto writes nanoseconds as three
    // decimals): a double holds 1.7e15 us only to 0.25 us, so the exact nanoseconds are
    // kept beside it (kExactTsKey), read from the text.
    if (skip_nest_ == 0 && key_ == "ts" && at_event())
      if (auto ns = exact_ns_of_decimal(text)) (*stack_.back())[kExactTsKey] = *ns;
    return true;
  }
  bool string(string_t& v) override { return put(std::move(v)); }
  bool binary(binary_t& v) override { return put(json::binary(std::move(v))); }
  bool start_object(std::size_t) override {
    if (!open_container()) return false;
    if (skip_value()) return true;
    // An event is an element of a top-level array, or of an array one level down
    // (traceEvents); its "args" object is filtered.
    const bool args_of_event = key_ == "args" && (stack_.size() == 2 || stack_.size() == 3) && stack_.back()->is_object() &&
                               stack_[stack_.size() - 2]->is_array();
    stack_.push_back(slot(json::object()));
    if (args_of_event) args_level_ = stack_.size();
    return true;
  }
  bool key(string_t& k) override {
    if (skip_nest_ > 0) return true;
    if (stack_.size() == args_level_ && !kArgsRead.count(k)) {
      skip_next_ = true;
      return true;
    }
    // A repeated "ts" replaces the first: so does its exact value (or its absence).
    if (k == "ts" && at_event()) stack_.back()->erase(kExactTsKey);
    key_ = std::move(k);
    return true;
  }
  bool end_object() override {
    --depth_;
    if (skip_nest_ > 0) return --skip_nest_, true;
    if (stack_.size() == args_level_) args_level_ = 0;
    json* done = stack_.back();
    stack_.pop_back();
    if (stack_.size() <= 2 && !stack_.empty() && stack_.back()->is_array() && !event_is_read(*done)) *done = json::object();
    return true;
  }
  bool start_array(std::size_t) override {
    if (!open_container()) return false;
    if (skip_value()) return true;
    stack_.push_back(slot(json::array()));
    return true;
  }
  bool end_array() override {
    --depth_;
    if (skip_nest_ > 0) return --skip_nest_, true;
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) override {
    error_byte = byte;
    error = e.what();
    malformed = dynamic_cast<const json::parse_error*>(&e) != nullptr;
    return false;
  }

 private:
  // Whether the innermost open value is an event (an object in the top-level array, or in
  // an array one level down: traceEvents).
  bool at_event() const {
    return (stack_.size() == 2 || stack_.size() == 3) && stack_.back()->is_object() && stack_[stack_.size() - 2]->is_array();
  }
  // Counts an object or array that opens; false (stop parsing) past kMaxJsonDepth levels,
  // dropped values included: copying or printing such a value overflows the stack.
  bool open_container() {
    if (++depth_ <= kMaxJsonDepth) return true;
    too_deep = true;
    error_byte = in_.position();
    return false;
  }
  // For an object or array that opens: whether it is (inside) a dropped value.
  bool skip_value() {
    if (skip_next_ || skip_nest_ > 0) {
      skip_next_ = false;
      ++skip_nest_;
      return true;
    }
    return false;
  }
  json* slot(json&& v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    json& s = top[key_];
    s = std::move(v);
    return &s;
  }
  template <typename T>
  bool put(T&& v) {
    if (skip_nest_ > 0) return true;
    if (skip_next_) {
      skip_next_ = false;
      return true;
    }
    slot(json(std::forward<T>(v)));
    return true;
  }
  const GzStreamBuf& in_;
  int depth_ = 0;  // objects and arrays open
  std::vector<json*> stack_;
  std::string key_;
  std::size_t args_level_ = 0;  // stack depth of the event args being filtered; 0: none
  bool skip_next_ = false;      // the next value is a dropped arg
  int skip_nest_ = 0;           // depth inside a dropped object or array
};

}  // namespace

json parse_trace_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) input_error(path, "", "is a directory, not a trace file");
  // A pipe is input (<(zcat trace.json.gz)); a device is not (/dev/zero never ends).
  if (const auto st = std::filesystem::status(path, ec);
      !ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) && !std::filesystem::is_fifo(st))
    input_error(path, "", "is not a file or a pipe (a trace is read from a file, plain or gzip)");
  GzStreamBuf buf(path);
  TraceDomBuilder dom(buf);
  {
    std::istream in(&buf);
    if (!json::sax_parse(in, &dom)) {
      // Garbage from a corrupt gzip stream reaches the parser before zlib's check at the end
      // of the stream fails: read on, so that the gzip error is the one reported.
      while (in.rdbuf()->sbumpc() != std::char_traits<char>::eof()) {
      }
      if (dom.too_deep) json_nesting_error(path, "byte " + std::to_string(dom.error_byte));
      if (dom.malformed) input_error(path, "byte " + std::to_string(dom.error_byte), "malformed JSON: " + dom.error);
      input_error(path, "byte " + std::to_string(dom.error_byte), "unreadable JSON: " + dom.error);
    }
    const size_t end = buf.position();  // just after the NUL, if one ended the text
    reject_text_after_nul(*in.rdbuf(), path, "byte " + std::to_string(end > 0 ? end - 1 : 0));
  }
  return std::move(dom.root);
}

Workload import_kineto(const std::string& path) { return kineto_from_json(parse_trace_file(path), path); }

Workload kineto_from_json(const json& doc, const std::string& path) {
  // composim's own outputs, picked up from a directory that also holds traces (--out into it).
  if (doc.is_object() && doc.contains("otherData") && doc["otherData"].is_object() && doc["otherData"].value("generator", json()) == "composim")
    input_error(path, "otherData.generator", "this is a timeline composim wrote (run --out), not a captured trace");
  if (doc.is_object() && doc.contains("predicted_iteration_s") && doc.contains("breakdown"))
    input_error(path, "top level", "this is a summary composim wrote (run --out), not a captured trace");
  if (doc.is_object() && doc.contains("nodes") && doc.contains("schema"))
    input_error(path, "top level",
                "this is a PyTorch execution trace (host graph), not a Kineto trace: replay needs the profiler's "
                "Chrome trace of the same run");
  const json* events = nullptr;
  if (doc.is_object() && doc.contains("traceEvents") && doc["traceEvents"].is_array()) events = &doc["traceEvents"];
  else if (doc.is_array()) events = &doc;
  if (!events)
    input_error(path, "top level", "not a Chrome trace: expected an object with a \"traceEvents\" array, or an array of events");

  Workload w;
  w.source = path;
  w.format = "kineto";
  bool has_distributed_info = false;
  w.rank_known = false;
  w.world_size_given = false;
  if (doc.is_object()) {
    if (auto it = doc.find("distributedInfo"); it != doc.end() && it->is_object()) {
      has_distributed_info = true;
      const std::int64_t world = checked_int(*it, "world_size", path, "distributedInfo", 1, 1, 1'000'000);
      // Without a world size (taken as 1), a rank past 0 is named as what it lacks.
      if (!it->contains("world_size"))
        if (const std::int64_t given = checked_int(*it, "rank", path, "distributedInfo", 0, 0, 1'000'000 - 1); given > 0)
          input_error(path, "distributedInfo.world_size", "absent, while distributedInfo.rank is " + std::to_string(given) + ": give the job's world size");
      const std::int64_t rank = checked_int(*it, "rank", path, "distributedInfo", 0, 0, world - 1);
      w.rank = static_cast<int>(rank);
      w.rank_known = it->contains("rank");
      w.world_size_given = it->contains("world_size");
      w.world_size = static_cast<int>(world);
      if (auto pg = it->find("pg_config"); pg != it->end() && pg->is_array()) {
        for (size_t pi = 0; pi < pg->size(); ++pi) {
          const json& p = (*pg)[pi];
          if (!p.is_object()) continue;
          if (get_str(p, "backend_config").find("nccl") == std::string::npos && p.contains("backend_config")) continue;
          Communicator c;
          c.name = get_str(p, "pg_name");
          if (auto r = p.find("ranks"); r != p.end() && r->is_array())
            for (size_t k = 0; k < r->size(); ++k) {
              const json x = {{"rank", (*r)[k]}};
              c.ranks.push_back(static_cast<int>(checked_int(x, "rank", path,
                                                             "distributedInfo.pg_config[" + std::to_string(pi) + "].ranks[" + std::to_string(k) + "]",
                                                             0, 0, world - 1)));
            }
          // PyTorch writes the whole rank list and its size: they must agree.
          if (p.contains("pg_size") && p.contains("ranks")) {
            const std::int64_t size = checked_int(p, "pg_size", path, "distributedInfo.pg_config[" + std::to_string(pi) + "]", 0, 0, 1'000'000);
            if (static_cast<size_t>(size) != c.ranks.size())
              input_error(path, "distributedInfo.pg_config[" + std::to_string(pi) + "]",
                          "\"pg_size\" = " + std::to_string(size) + " but \"ranks\" lists " + std::to_string(c.ranks.size()) + " ranks");
          }
          w.communicators.push_back(std::move(c));
        }
      }
    }
    if (auto it = doc.find("synthetic"); it != doc.end() && it->is_boolean()) w.synthetic = it->get<bool>();
    if (auto it = doc.find("deviceProperties"); it != doc.end() && it->is_array() && !it->empty())
      w.gpu_model = get_str((*it)[0], "name");
  }

  // Pass 1: classify events and find the time origin.
  std::vector<RawGpu> gpu;
  std::vector<RawCall> calls;
  std::vector<const json*> steps;
  std::unordered_multimap<std::int64_t, const json*> comms_by_external_id;  // record_param_comms naming a peer
  // record_param_comms of sends and receives (event index, thread, exact start in ns): those
  // whose "External id" no kernel repeats were batched (batch_isend_irecv), and belong to the
  // batched send/recv kernel their thread launches next (see batch_parts below).
  struct P2pRecord {
    size_t event;
    std::string thread;
    std::int64_t ts_ns;
  };
  std::vector<P2pRecord> p2p_records;
  std::unordered_set<std::int64_t> kernel_external_ids;
  struct SyncInfo {
    std::int64_t stream = -1, wait_on_stream = -1, record_corr = -1;
  };
  std::unordered_map<std::int64_t, SyncInfo> sync_by_corr;  // cuda_sync events, by call correlation
  std::map<std::string, std::int32_t> thread_index;
  constexpr double kMaxTimestampUs = 9.2e15;
  constexpr std::int64_t kMaxId = std::int64_t{1} << 62;  // correlation and stream ids of calls and syncs
  double t0_us = INFINITY, last_end_us = -INFINITY;
  // The first timestamp in exact nanoseconds: each event's "ts" is read exactly (kExactTsKey)
  // where its text allows, so that gaps keep their nanoseconds after t0 is subtracted.
  std::int64_t t0_ns = INT64_MAX;
  auto exact_ts_ns = [](const json& e, double ts_us) -> std::int64_t {
    auto it = e.find(kExactTsKey);
    // Else the double (exact for integer microseconds), scaled in long double: 1.7e18 ns
    // needs more than a double's 53 bits.
    return it != e.end() && it->is_number_integer() ? it->get<std::int64_t>() : std::llround(static_cast<long double>(ts_us) * 1000.0L);
  };
  size_t t0_index = 0, last_index = 0;
  bool legacy = false;
  for (size_t i = 0; i < events->size(); ++i) {
    const json& e = (*events)[i];
    if (!e.is_object()) input_error(path, "traceEvents[" + std::to_string(i) + "]", "expected an event object");
    auto ph = e.find("ph");
    if (ph == e.end() || !ph->is_string() || *ph != "X") continue;
    auto cat_it = e.find("cat");
    if (cat_it == e.end() || !cat_it->is_string()) continue;
    const std::string& cat = cat_it->get_ref<const std::string&>();
    if (cat == "Kernel" || cat == "Runtime" || cat == "Memcpy" || cat == "Memset") legacy = true;
    const bool is_gpu = cat == "kernel" || cat == "Kernel" || cat == "gpu_memcpy" || cat == "Memcpy" ||
                        cat == "gpu_memset" || cat == "Memset";
    const bool is_call = cat == "cuda_runtime" || cat == "Runtime" || cat == "cuda_driver";
    const bool is_step = (cat == "user_annotation" || cat == "Operator" || cat == "cpu_op") && e.contains("name") &&
                         e["name"].is_string() && e["name"].get_ref<const std::string&>().rfind("ProfilerStep#", 0) == 0;
    // A GPU event's or CUDA call's name says what it is (an NCCL collective, a copy's
    // direction, a synchronisation), a CPU annotation's whether it marks a step: one that is
    // not a string would silently be none.
    const bool is_annotation = cat == "user_annotation" || cat == "Operator" || cat == "cpu_op";
    if (auto name = e.find("name"); (is_gpu || is_call || is_annotation) && name != e.end() && !name->is_string())
      input_error(path, "traceEvents[" + std::to_string(i) + "]", "\"name\" must be a string, not " + shown_value(*name));
    // Kineto before 2025 copies a send's or receive's "Collective name" and sizes from its
    // record_param_comms CPU op to its kernel but not its peer ("Dst Rank" / "Src Rank"); a
    // collective's "Seq" (2026) is read from either: the op is kept by its "External id",
    // which the kernel's repeats.
    // A record_param_comms whose args are not an object would silently lose a collective's
    // or a batched send's metadata.
    if (cat == "cpu_op" && e.contains("args") && !e["args"].is_object() && e.contains("name") && e["name"] == "record_param_comms")
      input_error(path, "traceEvents[" + std::to_string(i) + "]", "\"args\" must be an object");
    if (cat == "cpu_op" && !is_step && e.contains("args") && e["args"].is_object()) {
      const json& a = e["args"];
      if (a.contains("Dst Rank") || a.contains("Src Rank") || a.contains("Seq"))
        if (const auto id = exact_id(a, "External id")) comms_by_external_id.emplace(*id, &e);
      if (a.contains("Dst Rank") || a.contains("Src Rank")) {
        const std::string cname = lowered_str(a, "Collective name");
        if (cname == "send" || cname == "recv") {
          const double ts = checked_number(e, "ts", path, i, -kMaxTimestampUs, kMaxTimestampUs);
          // Its thread is matched with the launch calls' (a record on no known thread would be
          // no batch's without a word).
          for (const char* key : {"pid", "tid"})
            if (auto id = e.find(key); id != e.end() && !id->is_string() && !id->is_number())
              input_error(path, "traceEvents[" + std::to_string(i) + "]." + key, "expected a process or thread id (a number or a string), not " + shown_value(*id));
          // A send names its destination, a receive its source: the other key alone is a
          // malformed record, not a batched one of unknown peer.
          if (const char* want = cname == "send" ? "Dst Rank" : "Src Rank"; !a.contains(want))
            input_error(path, "traceEvents[" + std::to_string(i) + "].args",
                        std::string("a ") + (cname == "send" ? "send" : "receive") + " gives \"" + (cname == "send" ? "Src Rank" : "Dst Rank") +
                            "\" but not its \"" + want + "\"");
          const std::string tid = (e.contains("pid") ? id_string(e["pid"]) : "?") + "/" + (e.contains("tid") ? id_string(e["tid"]) : "?");
          p2p_records.push_back({i, tid, exact_ts_ns(e, ts)});
        }
      }
      continue;
    }
    if (!is_gpu && !is_call && !is_step && cat != "cuda_sync") continue;
    // In nanoseconds a timestamp must fit an int64 (9.22e18 ns: 9.2e15 us, 290 years).
    const double ts = checked_number(e, "ts", path, i, -kMaxTimestampUs, kMaxTimestampUs);
    const double dur = checked_number(e, "dur", path, i, 0.0, kMaxUs);
    if (ts < t0_us) t0_index = i;
    if (ts + dur > last_end_us) {
      last_end_us = ts + dur;
      last_index = i;
    }
    if (e.contains("args") && !e["args"].is_object())
      input_error(path, "traceEvents[" + std::to_string(i) + "]", "\"args\" must be an object");
    t0_us = std::min(t0_us, ts);
    t0_ns = std::min(t0_ns, exact_ts_ns(e, ts));
    if (cat == "cuda_sync") {
      const json& a = e.contains("args") ? e["args"] : json::object();
      auto id = [&](const char* key) { return checked_arg(a, key, path, i, -1, -kMaxId, kMaxId); };
      sync_by_corr[id("correlation")] = {id("stream"), id("wait_on_stream"), id("wait_on_cuda_event_record_corr_id")};
    } else if (is_step) {
      steps.push_back(&e);
    } else if (is_gpu) {
      const json& a = e.contains("args") ? e["args"] : json::object();
      GpuOpKind k = (cat == "kernel" || cat == "Kernel") ? GpuOpKind::kernel
                    : (cat == "gpu_memcpy" || cat == "Memcpy") ? GpuOpKind::memcpy
                                                                : GpuOpKind::memset;
      const auto device = checked_arg(a, "device", path, i, 0, 0, 1 << 20);
      if (!a.contains("stream"))
        input_error(path, "traceEvents[" + std::to_string(i) + "].args",
                    "GPU event without a \"stream\": stream order cannot be replayed without it");
      // Stream ids are small integers; 2^40 keeps them exact as doubles in trace viewers.
      const auto stream = checked_arg(a, "stream", path, i, 0, INT32_MIN, std::int64_t{1} << 40);
      // One trace is one rank on one GPU; a process driving several GPUs (DataParallel)
      // would be replayed as if one GPU ran all their work.
      if (!gpu.empty() && device != gpu.front().device)
        input_error(path, "traceEvents[" + std::to_string(i) + "].args.device",
                    "GPU activity on device " + std::to_string(device) + " and on device " + std::to_string(gpu.front().device) +
                        ": composim replays one GPU per trace (one trace per rank, e.g. DistributedDataParallel)");
      if (k != GpuOpKind::kernel) checked_arg(a, "bytes", path, i, 0, 0, std::int64_t{1} << 50);
      if (k == GpuOpKind::kernel)
        if (const auto id = exact_id(a, "External id")) kernel_external_ids.insert(*id);
      // A collective's element counts and group size: at most 2^47 elements (2^50 bytes of
      // 8-byte elements), so sizes in bytes cannot overflow.
      if (k == GpuOpKind::kernel) {
        for (const char* key : {"In msg nelems", "Out msg nelems"}) checked_arg(a, key, path, i, 0, 0, std::int64_t{1} << 47);
        checked_arg(a, "Group size", path, i, 0, 0, 1'000'000);
        if (auto pgr = a.find("Process Group Ranks"); pgr != a.end()) {
          std::vector<int> ranks;
          bool truncated = false;
          const std::string text = pgr->is_string() ? pgr->get<std::string>() : pgr->dump();
          if (!parse_rank_list(text, ranks, &truncated))
            input_error(path, "traceEvents[" + std::to_string(i) + "].args",
                        "\"Process Group Ranks\" = " + shown_value(*pgr) + " is not a list of ranks (expected e.g. \"[0, 1]\")");
          const std::int64_t group = get_int(a, "Group size", 0);
          if (group > 0 && !ranks.empty() && !truncated && static_cast<size_t>(group) != ranks.size())
            input_error(path, "traceEvents[" + std::to_string(i) + "].args",
                        "\"Group size\" = " + std::to_string(group) + " but \"Process Group Ranks\" lists " + std::to_string(ranks.size()) +
                            " ranks");
        }
      }
      gpu.push_back({&e, k, static_cast<int>(device), stream, checked_arg(a, "correlation", path, i, -1, -kMaxId, kMaxId), 0, 0});
    } else {
      const json& a = e.contains("args") ? e["args"] : json::object();
      const std::string tid = (e.contains("pid") ? id_string(e["pid"]) : "?") + "/" + (e.contains("tid") ? id_string(e["tid"]) : "?");
      auto [it, inserted] = thread_index.emplace(tid, static_cast<std::int32_t>(thread_index.size()));
      calls.push_back({&e, it->second, is_call ? checked_arg(a, "correlation", path, i, -1, -kMaxId, kMaxId) : get_int(a, "correlation"), 0, 0});
    }
  }
  if (legacy) w.format = "kineto-legacy";
  // Times become integer nanoseconds from the first event: a span of more than 11.6 days is
  // a broken timestamp, not a trace (and would overflow).
  if (last_end_us - t0_us > kMaxUs)
    input_error(path, "traceEvents[" + std::to_string(last_index) + "]",
                "ends " + std::to_string(static_cast<long long>((last_end_us - t0_us) * 1e-6)) + " s after traceEvents[" +
                    std::to_string(t0_index) + "] starts; a trace may span at most 11.6 days (a timestamp is wrong)");
  if (gpu.empty())
    input_error(path, "traceEvents",
                "no GPU activity to replay (no kernel, memcpy or memset events; a counter-only CUPTI profiler trace has "
                "none)");

  auto to_ns = [&](const json& e, const char* key) -> std::int64_t {
    auto it = e.find(key);
    if (it == e.end() || !it->is_number()) return 0;
    if (key[0] == 't') return exact_ts_ns(e, it->get<double>()) - t0_ns;
    return std::llround(it->get<double>() * 1000.0);
  };
  w.base_ns = t0_ns;

  // Threads and their calls, in time order.
  w.threads.resize(thread_index.size());
  for (const auto& [id, idx] : thread_index) w.threads[idx].id = id;
  for (auto& c : calls) {
    c.ts_ns = to_ns(*c.ev, "ts");
    c.dur_ns = std::max<std::int64_t>(0, to_ns(*c.ev, "dur"));
  }
  std::stable_sort(calls.begin(), calls.end(), [](const RawCall& a, const RawCall& b) {
    return a.thread != b.thread ? a.thread < b.thread : a.ts_ns < b.ts_ns;
  });
  struct CallRef {
    std::int32_t thread, op;
  };
  std::unordered_map<std::int64_t, CallRef> call_by_corr;
  std::vector<std::vector<std::int64_t>> op_corr(w.threads.size());
  for (const auto& c : calls) {
    op_corr[c.thread].push_back(c.correlation);
    CpuThread& t = w.threads[c.thread];
    CpuOp op;
    op.name = w.intern((*c.ev)["name"].is_string() ? (*c.ev)["name"].get<std::string>() : "?");
    op.ts_ns = c.ts_ns;
    op.dur_ns = c.dur_ns;
    if (c.correlation >= 0) call_by_corr[c.correlation] = {c.thread, static_cast<std::int32_t>(t.ops.size())};
    t.ops.push_back(std::move(op));
  }

  // GPU ops, streams, collectives.
  for (auto& g : gpu) {
    g.ts_ns = to_ns(*g.ev, "ts");
    g.dur_ns = std::max<std::int64_t>(0, to_ns(*g.ev, "dur"));
  }
  std::stable_sort(gpu.begin(), gpu.end(), [](const RawGpu& a, const RawGpu& b) { return a.ts_ns < b.ts_ns; });
  // Batched sends and receives (batch_isend_irecv): NCCL launches one kernel for the group at
  // ncclGroupEnd, after every send's and receive's record_param_comms has ended, so the kernel
  // names no peer and repeats none of their "External id"s (pytorch/pytorch#194693). Its
  // parts are the sends' and receives' record_param_comms whose "External id" no kernel
  // repeats, recorded by its launching thread at or before the launch and after that
  // thread's previous NCCL kernel launch (a single send's, another NCCL kernel's, or one of a
  // kernel the trace lacks leaves none pending: none is batched).
  std::unordered_map<const json*, std::vector<size_t>> batch_parts;  // kernel event -> its parts' events, in order
  if (!p2p_records.empty()) {
    struct Launch {
      std::int32_t thread;
      std::int64_t ts_ns;
      const json* kernel;
      bool batched;  // else a single send or receive: the records before it are no batch's
    };
    std::vector<Launch> launches;
    std::unordered_set<std::int64_t> p2p_corr;     // their launches' correlations
    std::unordered_set<std::int64_t> other_corr;   // other kernels' but NCCL's (a NaN check's, TORCH_NCCL_NAN_CHECK)
    for (const auto& g : gpu) {
      if (g.kind != GpuOpKind::kernel || g.correlation < 0) continue;
      const json& e = *g.ev;
      if (!e.contains("name") || !e["name"].is_string()) continue;
      const auto nccl = collective::parse_nccl_kernel_name(e["name"].get<std::string>());
      if (!nccl.is_nccl) other_corr.insert(g.correlation);
      const json& a = e.contains("args") ? e["args"] : json::object();
      const std::string cname = lowered_str(a, "Collective name");
      const auto named_kind = collective::parse_kind(cname);
      if (!nccl.is_nccl || nccl.kind != collective::Kind::send_recv || (named_kind != collective::Kind::unknown && named_kind != collective::Kind::send_recv))
        continue;
      if (const auto call = call_by_corr.find(g.correlation); call != call_by_corr.end()) {
        launches.push_back({call->second.thread, w.threads[call->second.thread].ops[call->second.op].ts_ns, &e, cname != "send" && cname != "recv"});
        p2p_corr.insert(g.correlation);
      }
    }
    // So does another NCCL kernel's launch, or a launch whose kernel the trace does not hold:
    // the records before it are of a send/recv kernel that ran before it or that the trace
    // lost (CUPTI dropping activity), not the next batch's. Other kernels may be launched
    // between a batch's records and its ncclGroupEnd (PyTorch's NaN check of each send).
    for (std::int32_t t = 0; t < static_cast<std::int32_t>(w.threads.size()); ++t)
      for (size_t i = 0; i < w.threads[t].ops.size(); ++i) {
        const std::string& name = w.names[w.threads[t].ops[i].name];
        if (name.find("Launch") != std::string::npos && name.find("Kernel") != std::string::npos && !p2p_corr.count(op_corr[t][i]) &&
            !other_corr.count(op_corr[t][i]))
          launches.push_back({t, w.threads[t].ops[i].ts_ns, nullptr, false});
      }
    std::stable_sort(launches.begin(), launches.end(),
                     [](const Launch& x, const Launch& y) { return x.thread != y.thread ? x.thread < y.thread : x.ts_ns < y.ts_ns; });
    std::vector<std::vector<std::pair<std::int64_t, size_t>>> records(w.threads.size());  // per thread: (ts, event)
    for (const auto& r : p2p_records) {
      if (const auto id = exact_id((*events)[r.event]["args"], "External id"); id && kernel_external_ids.count(*id)) continue;  // a single one's
      if (const auto t = thread_index.find(r.thread); t != thread_index.end())
        records[t->second].push_back({r.ts_ns - t0_ns, r.event});
      else
        ++w.p2p_records_without_kernel;  // on a thread that launches nothing
    }
    for (auto& v : records) std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<size_t> next(w.threads.size(), 0);
    for (const auto& l : launches) {
      auto& v = records[l.thread];
      auto& k = next[l.thread];
      std::vector<size_t> parts;
      while (k < v.size() && v[k].first <= l.ts_ns) parts.push_back(v[k++].second);
      if (l.batched && !parts.empty())
        batch_parts.emplace(l.kernel, std::move(parts));
      else
        w.p2p_records_without_kernel += parts.size();
    }
    for (size_t t = 0; t < records.size(); ++t) w.p2p_records_without_kernel += records[t].size() - next[t];
    if (w.p2p_records_without_kernel)
      w.notes.push_back(std::to_string(w.p2p_records_without_kernel) +
                        " send/recv record_param_comms of no kernel in the trace (no External id of a kernel, and no batched send/recv kernel "
                        "launched after them before another NCCL launch or the trace's end): a profiler window ending inside a "
                        "batch_isend_irecv, or kernels the profiler lost");
  }
  // A send's destination or a receive's source ("Dst Rank" / "Src Rank"): a global rank,
  // given exactly ("1a" or " 1" is not one).
  auto peer_rank = [&](const json& args, P2pRole role, const std::string& place) {
    const char* key = role == P2pRole::send ? "Dst Rank" : "Src Rank";
    const auto peer = exact_id(args, key);
    if (!peer || *peer < 0 || *peer > INT32_MAX)
      input_error(path, place, std::string("\"") + key + "\" = " + shown_value(args[key]) + " is not a rank (expected the " +
                                   (role == P2pRole::send ? "destination" : "source") + "'s global rank, e.g. 1)");
    return static_cast<int>(*peer);
  };
  std::map<std::pair<int, std::int64_t>, std::int32_t> stream_index;
  std::map<std::string, std::int32_t> comm_index;
  for (size_t i = 0; i < w.communicators.size(); ++i) comm_index[w.communicators[i].name] = static_cast<std::int32_t>(i);
  const auto pg_config_count = static_cast<std::int32_t>(w.communicators.size());  // the first ones come from pg_config
  std::vector<std::uint64_t> comm_seq, p2p_seq;
  std::vector<size_t> collective_event;  // per collective: its index in traceEvents
  std::unordered_map<size_t, size_t> peer_event;  // collective -> the event giving its peer, where not its kernel
  std::map<size_t, std::vector<size_t>> batch_event;  // batched send/recv collective -> its parts' events
  // Per collective: PyTorch's number of it in its process group ("Seq"; -1: not given, and
  // always for sends and receives, which PyTorch numbers per process group, not per pair)
  // and the event giving it.
  std::vector<std::int64_t> trace_seq;
  std::vector<size_t> seq_event;
  // Per communicator: the ranks shown by a list cut short that could not be completed, and
  // its event.
  std::map<std::int32_t, std::pair<std::vector<int>, size_t>> shown_ranks;
  size_t nccl_of_unknown_kind = 0, shared_correlation = 0;
  for (const auto& g : gpu) {
    const json& e = *g.ev;
    const json& a = e.contains("args") ? e["args"] : json::object();
    const std::string name = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "?";
    GpuOp op;
    op.kind = g.kind;
    op.name = w.intern(name);
    op.ts_ns = g.ts_ns;
    op.dur_ns = g.dur_ns;
    auto [sit, inserted] = stream_index.emplace(std::make_pair(g.device, g.stream), static_cast<std::int32_t>(w.streams.size()));
    if (inserted) w.streams.push_back({g.stream, g.device, {}});
    op.stream = sit->second;
    if (g.kind != GpuOpKind::kernel) op.bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, get_int(a, "bytes", 0)));
    if (g.kind == GpuOpKind::memcpy) {
      op.copy = copy_kind_of(name);
      op.pageable = name.find("Pageable") != std::string::npos;
    }
    const std::int32_t index = static_cast<std::int32_t>(w.gpu_ops.size());
    if (g.kind == GpuOpKind::kernel) {
      auto nccl = collective::parse_nccl_kernel_name(name);
      collective::Kind kind = collective::Kind::unknown;
      if (nccl.is_nccl) {
        const std::string cname = get_str(a, "Collective name");
        kind = cname.empty() ? nccl.kind : collective::parse_kind(cname);
        if (kind == collective::Kind::unknown) kind = nccl.kind;
        // Neither the name (ncclDevKernel_Generic, ...) nor the args say which operation:
        // a kernel at its measured duration, not a collective of no bytes (free).
        if (kind == collective::Kind::unknown) {
          nccl.is_nccl = false;
          ++nccl_of_unknown_kind;
        }
      }
      if (nccl.is_nccl) {
        op.kind = GpuOpKind::collective;
        Collective c;
        c.kind = kind;
        c.algorithm = nccl.algorithm;
        c.protocol = nccl.protocol;
        c.protocol_from_trace = nccl.protocol_reliable;
        // NCCL runs NVLS and NVLS_TREE only in Simple: a kernel name that says otherwise is
        // not NCCL's.
        if (c.protocol_from_trace && collective::runs_only_in_simple(c.algorithm) && c.protocol != collective::Protocol::simple)
          input_error(path, "traceEvents[" + std::to_string(static_cast<size_t>(g.ev - &(*events)[0])) + "].name",
                      "kernel \"" + shown_text(name) + "\" names " + c.algorithm + " in " + std::string(collective::to_string(c.protocol)) +
                          ", which NCCL runs only in Simple");
        c.dtype = get_str(a, "dtype");
        const std::int64_t nelems = get_int(a, "In msg nelems", -1);
        const int esize = collective::dtype_size_B(c.dtype);
        if (nelems >= 0 && esize > 0) c.in_bytes = static_cast<std::uint64_t>(nelems) * esize;
        c.group_size = static_cast<int>(get_int(a, "Group size", 0));
        const size_t event_index = static_cast<size_t>(g.ev - &(*events)[0]);
        const std::string args_place = "traceEvents[" + std::to_string(event_index) + "].args";
        // A single send or receive: PyTorch 2.4+ gives its peer's global rank, which lets the
        // replay pair it with that rank's receive or send (peer_problem() checks it is a rank
        // of the job and of the group): on the kernel, or (Kineto before 2025) on the
        // record_param_comms CPU op of the kernel's "External id". Batched ones name none.
        const std::string cname = lowered_str(a, "Collective name");
        if (kind == collective::Kind::send_recv && (cname == "send" || cname == "recv")) {
          const char* key = cname == "send" ? "Dst Rank" : "Src Rank";
          const json* peer_args = &a;
          std::string peer_place = args_place;
          // The op of the kernel's id that gives this key; two that give different peers
          // cannot be told apart.
          if (const auto id = exact_id(a, "External id"); !a.contains(key) && id) {
            const auto [from, to] = comms_by_external_id.equal_range(*id);
            for (auto op = from; op != to; ++op) {
              const json& oa = (*op->second)["args"];
              if (!oa.contains(key)) continue;
              const size_t at = static_cast<size_t>(op->second - &(*events)[0]);
              if (peer_args != &a && get_int(*peer_args, key, -1) != get_int(oa, key, -1))
                input_error(path, args_place,
                            std::string("\"External id\" ") + std::to_string(*id) + " is that of two record_param_comms giving different \"" + key +
                                "\" (traceEvents[" + std::to_string(peer_event[w.collectives.size()]) + "] and traceEvents[" + std::to_string(at) +
                                "]): the kernel's peer cannot be told");
              if (peer_args == &a) {
                peer_args = &oa;
                peer_event[w.collectives.size()] = at;
                peer_place = "traceEvents[" + std::to_string(at) + "].args";
              }
            }
          }
          c.p2p_role = cname == "send" ? P2pRole::send : P2pRole::recv;
          if (peer_args->contains(key)) c.peer = peer_rank(*peer_args, c.p2p_role, peer_place);
        }
        // A batched send/recv: each part's direction, peer and size from its record_param_comms,
        // and the process group from theirs where the kernel does not give it (even where a
        // part names no peer, which leaves the kernel unnamed: at its measured duration).
        const json* group_args = &a;  // where its process group is read
        size_t group_event = event_index;
        if (const auto bp = batch_parts.find(g.ev); bp != batch_parts.end() && kind == collective::Kind::send_recv && cname != "send" && cname != "recv") {
          const json& first = (*events)[bp->second.front()]["args"];
          const std::string group = get_str(first, "Process Group Name");
          // PyTorch batches sends and receives of one process group only.
          if (a.contains("Process Group Name") && get_str(a, "Process Group Name") != group)
            input_error(path, args_place,
                        "\"Process Group Name\" = \"" + shown_text(get_str(a, "Process Group Name")) + "\" but its sends and receives (traceEvents[" +
                            std::to_string(bp->second.front()) + "], ...) are on \"" + shown_text(group) + "\": a batch is of one process group");
          std::vector<P2pPart> parts;
          bool named = true;
          std::uint64_t total = 0;
          for (const size_t at : bp->second) {
            const json& oa = (*events)[at]["args"];
            const std::string place = "traceEvents[" + std::to_string(at) + "].args";
            if (get_str(oa, "Process Group Name") != group)
              input_error(path, place,
                          "\"Process Group Name\" = \"" + shown_text(get_str(oa, "Process Group Name")) + "\" but \"" + shown_text(group) +
                              "\" on traceEvents[" + std::to_string(bp->second.front()) + "], a send or receive of the same batched kernel (traceEvents[" +
                              std::to_string(event_index) + "]): a batch is of one process group");
            if (auto pgr = oa.find("Process Group Ranks"); pgr != oa.end()) {
              std::vector<int> ranks;
              if (!parse_rank_list(pgr->is_string() ? pgr->get<std::string>() : pgr->dump(), ranks))
                input_error(path, place, "\"Process Group Ranks\" = " + shown_value(*pgr) + " is not a list of ranks (expected e.g. \"[0, 1]\")");
            }
            P2pPart part;
            part.role = lowered_str(oa, "Collective name") == "send" ? P2pRole::send : P2pRole::recv;
            if (!oa.contains(part.role == P2pRole::send ? "Dst Rank" : "Src Rank")) {
              named = false;
              continue;
            }
            part.peer = peer_rank(oa, part.role, place);
            const std::int64_t nelems = checked_arg(oa, "In msg nelems", path, at, -1, 0, std::int64_t{1} << 47);
            if (const int esize = collective::dtype_size_B(get_str(oa, "dtype")); nelems >= 0 && esize > 0)
              part.in_bytes = static_cast<std::uint64_t>(nelems) * static_cast<std::uint64_t>(esize);
            total = std::min(total + part.in_bytes, std::uint64_t{1} << 62);  // each at most 2^50: no overflow
            parts.push_back(part);
          }
          // A collective's size is at most 2^50 bytes (the IR's bound).
          if (named && total > (std::uint64_t{1} << 50))
            input_error(path, args_place,
                        "its " + std::to_string(parts.size()) + " sends and receives (traceEvents[" + std::to_string(bp->second.front()) + "], ...) add up to " +
                            std::to_string(total) + " bytes, more than 2^50");
          if (named) {
            c.batch = std::move(parts);
            c.in_bytes = total;
            batch_event[w.collectives.size()] = bp->second;
            if (c.dtype.empty()) c.dtype = get_str(first, "dtype");
          }
          if (!a.contains("Process Group Name")) {
            group_args = &first;
            group_event = bp->second.front();
            c.group_size = static_cast<int>(checked_arg(first, "Group size", path, group_event, 0, 0, 1'000'000));
          }
        }
        // PyTorch numbers each collective of a process group ("Seq", the same on every rank;
        // recorded since March 2026, pytorch/pytorch#177148, sends and receives by a counter
        // of their own): on the kernel, or on the record_param_comms of the kernel's id.
        std::int64_t pt_seq = -1;
        size_t pt_seq_event = event_index;
        if (kind != collective::Kind::send_recv) {
          // The kernel's own and its ops' must agree: which is right cannot be told.
          const json* seq_args = a.contains("Seq") ? &a : nullptr;
          if (const auto id = exact_id(a, "External id")) {
            const auto [from, to] = comms_by_external_id.equal_range(*id);
            for (auto op = from; op != to; ++op) {
              const json& oa = (*op->second)["args"];
              if (!oa.contains("Seq")) continue;
              const size_t at = static_cast<size_t>(op->second - &(*events)[0]);
              if (seq_args && exact_id(*seq_args, "Seq") != exact_id(oa, "Seq"))
                input_error(path, args_place,
                            "\"Seq\" = " + shown_value((*seq_args)["Seq"]) + " (traceEvents[" + std::to_string(pt_seq_event) + "]) but \"Seq\" = " +
                                shown_value(oa["Seq"]) + " on traceEvents[" + std::to_string(at) + "], the record_param_comms of its \"External id\" " +
                                std::to_string(*id) + ": the collective's number cannot be told");
              if (!seq_args) seq_args = &oa, pt_seq_event = at;
            }
          }
          if (seq_args) {
            const auto v = exact_id(*seq_args, "Seq");
            if (!v || *v < 0)
              input_error(path, "traceEvents[" + std::to_string(pt_seq_event) + "].args",
                          "\"Seq\" = " + shown_value((*seq_args)["Seq"]) +
                              " is not a sequence number (expected PyTorch's whole number of the collective in its process group, e.g. 17)");
            pt_seq = *v;
          }
        }
        const json& ga = *group_args;
        const std::string group_place = "traceEvents[" + std::to_string(group_event) + "].args";
        std::string pg = get_str(ga, "Process Group Name");
        if (pg.empty()) pg = "world";
        auto [cit, cnew] = comm_index.emplace(pg, static_cast<std::int32_t>(w.communicators.size()));
        // Checked in pass 1; a list PyTorch cut short is completed from the group size. One
        // that cannot be is kept (shown_ranks) to check the members given to it below.
        auto members = [&] {
          std::vector<int> ranks;
          bool truncated = false;
          parse_rank_list(get_str(ga, "Process Group Ranks"), ranks, &truncated);
          if (!truncated) return ranks;
          std::vector<int> all = complete_rank_list(ranks, c.group_size);
          if (all.empty() && !ranks.empty()) shown_ranks.emplace(cit->second, std::make_pair(ranks, group_event));
          return all;
        };
        if (cnew) {
          Communicator comm;
          comm.name = pg;
          comm.ranks = members();
          w.communicators.push_back(std::move(comm));
        } else if (w.communicators[cit->second].ranks.empty()) {
          w.communicators[cit->second].ranks = members();
        } else {
          // A process group's ranks as distributedInfo.pg_config (or an earlier collective)
          // give them and as this collective's args give them must agree, and its size: which
          // is right cannot be told, and either would be replayed without a word.
          const auto& known = w.communicators[cit->second].ranks;
          const std::string given_in = cit->second < pg_config_count ? " in distributedInfo.pg_config" : " in an earlier collective";
          if (const auto mine = members(); !mine.empty() && !same_members(mine, known))
            input_error(path, group_place,
                        "\"Process Group Ranks\" = \"" + shown_text(get_str(ga, "Process Group Ranks")) + "\" but process group \"" + shown_text(pg) + "\" has ranks [" +
                            rank_list_text(known) + "]" + given_in);
          if (c.group_size > 0 && static_cast<size_t>(c.group_size) != known.size())
            input_error(path, group_place,
                        "\"Group size\" = " + std::to_string(c.group_size) + " but process group \"" + pg + "\" has " +
                            std::to_string(known.size()) + " ranks" + given_in);
        }
        // A group larger than the job: its collectives would be scaled to ranks that do not
        // exist (an all_gather ~5x off with --ranks 4).
        if (has_distributed_info && c.group_size > w.world_size)
          input_error(path, group_place,
                      "\"Group size\" = " + std::to_string(c.group_size) + " but the job has " + std::to_string(w.world_size) +
                          " ranks (distributedInfo.world_size): a process group is at most the whole job");
        c.communicator = cit->second;
        if (comm_seq.size() < w.communicators.size()) comm_seq.resize(w.communicators.size(), 0);
        if (p2p_seq.size() < w.communicators.size()) p2p_seq.resize(w.communicators.size(), 0);
        // Point-to-point operations are counted apart: ranks of a pipeline run different
        // numbers of them, which must not shift the numbering of their collectives.
        c.seq = c.kind == collective::Kind::send_recv ? p2p_seq[c.communicator]++ : comm_seq[c.communicator]++;
        c.gpu_op = index;
        op.collective = static_cast<std::int32_t>(w.collectives.size());
        w.collectives.push_back(std::move(c));
        collective_event.push_back(event_index);
        trace_seq.push_back(pt_seq);
        seq_event.push_back(pt_seq_event);
      }
    }
    if (auto it = call_by_corr.find(g.correlation); g.correlation >= 0 && it != call_by_corr.end()) {
      CpuOp& call = w.threads[it->second.thread].ops[it->second.op];
      if (call.gpu_op < 0) {
        op.launch_thread = it->second.thread;
        op.launch_op = it->second.op;
        call.gpu_op = index;
      } else if (w.names[call.name].find("GraphLaunch") == std::string::npos) {
        ++shared_correlation;  // the profiler gives each launch its own id (a CUDA graph's kernels share its launch's)
      }
    }
    w.streams[op.stream].ops.push_back(index);
    w.gpu_ops.push_back(std::move(op));
  }

  // Per stream: launch times of its ops (in stream order) to find "the last op enqueued on
  // stream S before time t".
  auto launch_ts = [&](std::int32_t g) {
    const GpuOp& op = w.gpu_ops[g];
    return op.launch_thread >= 0 ? w.threads[op.launch_thread].ops[op.launch_op].ts_ns : op.ts_ns;
  };
  auto last_on_stream_before = [&](std::int32_t s, std::int64_t t) -> std::int32_t {
    const auto& ops = w.streams[s].ops;
    std::int32_t best = -1;
    // Stream order equals launch order; binary search on launch time.
    size_t lo = 0, hi = ops.size();
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (launch_ts(ops[mid]) <= t) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) best = ops[lo - 1];
    return best;
  };

  auto first_on_stream_after = [&](std::int32_t s, std::int64_t t) -> std::int32_t {
    const auto& ops = w.streams[s].ops;
    size_t lo = 0, hi = ops.size();
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (launch_ts(ops[mid]) <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo < ops.size() ? ops[lo] : -1;
  };
  auto stream_by_id = [&](std::int64_t id) -> std::int32_t {
    for (std::int32_t k = 0; k < static_cast<std::int32_t>(w.streams.size()); ++k)
      if (w.streams[k].id == id) return k;
    return -1;
  };

  // Pass 2, per thread in order: infer event record/wait pairs and synchronisation.
  struct Record {
    std::int64_t ts;
    std::int32_t gpu_op;  // op the event captures (-1: nothing was pending)
  };
  size_t waits_on_unknown_streams = 0;
  for (std::int32_t ti = 0; ti < static_cast<std::int32_t>(w.threads.size()); ++ti) {
    CpuThread& t = w.threads[ti];
    std::int32_t last_stream = -1;
    std::vector<Record> records;
    std::vector<std::int32_t> pending_waits;  // event ops waiting for the next launch's stream
    for (size_t oi = 0; oi < t.ops.size(); ++oi) {
      CpuOp& op = t.ops[oi];
      const std::string& name = w.names[op.name];
      if (op.gpu_op >= 0) {
        GpuOp& g = w.gpu_ops[op.gpu_op];
        for (std::int32_t ev : pending_waits)
          if (ev >= 0 && w.gpu_ops[ev].stream != g.stream) g.waits.push_back(ev);
        pending_waits.clear();
        last_stream = g.stream;
        const bool sync_copy = g.kind == GpuOpKind::memcpy &&
                               (name == "cudaMemcpy" || name == "cuMemcpy" || name == "cuMemcpyDtoH_v2" ||
                                name == "cuMemcpyHtoD_v2" || (g.pageable && g.copy != CopyKind::dtod));
        if (sync_copy) {
          op.blocking = true;
          op.waits.push_back(op.gpu_op);
        }
        continue;
      }
      if (name.find("EventRecord") != std::string::npos) {
        const std::int32_t captured = last_stream >= 0 ? last_on_stream_before(last_stream, op.ts_ns) : -1;
        records.push_back({op.ts_ns, captured});
      } else if (name.find("StreamWaitEvent") != std::string::npos) {
        // Newer traces say which record a wait pairs with and which streams are involved
        // (cuda_sync "Stream Wait Event": stream, wait_on_stream,
        // wait_on_cuda_event_record_corr_id); use that when present.
        auto si = sync_by_corr.find(op_corr[ti][oi]);
        if (si != sync_by_corr.end() && si->second.wait_on_stream >= 0 && si->second.stream >= 0) {
          const std::int32_t from = stream_by_id(si->second.wait_on_stream), to = stream_by_id(si->second.stream);
          std::int64_t rec_ts = op.ts_ns;
          if (auto rc = call_by_corr.find(si->second.record_corr); rc != call_by_corr.end())
            rec_ts = w.threads[rc->second.thread].ops[rc->second.op].ts_ns;
          if (from < 0 && to >= 0) ++waits_on_unknown_streams;  // a stream with work waits on one the trace lacks
          if (from >= 0 && to >= 0 && from != to) {
            const std::int32_t captured = last_on_stream_before(from, rec_ts);
            const std::int32_t target = first_on_stream_after(to, op.ts_ns);
            if (captured >= 0 && target >= 0) w.gpu_ops[target].waits.push_back(captured);
          }
          continue;
        }
        if (!records.empty()) pending_waits.push_back(records.back().gpu_op);
      } else if (name.find("EventSynchronize") != std::string::npos) {
        if (!records.empty() && records.back().gpu_op >= 0) {
          op.blocking = true;
          op.waits.push_back(records.back().gpu_op);
        }
      } else if (name.find("StreamSynchronize") != std::string::npos || name.find("cuStreamSynchronize") != std::string::npos) {
        std::int32_t s = last_stream;
        // A cuda_sync event with this call's correlation names the stream.
        if (auto it = sync_by_corr.find(op_corr[ti][oi]); it != sync_by_corr.end() && stream_by_id(it->second.stream) >= 0)
          s = stream_by_id(it->second.stream);
        if (s >= 0) {
          const std::int32_t g = last_on_stream_before(s, op.ts_ns);
          if (g >= 0) {
            op.blocking = true;
            op.waits.push_back(g);
          }
        }
      } else if (name.find("DeviceSynchronize") != std::string::npos || name.find("cuCtxSynchronize") != std::string::npos) {
        for (std::int32_t s = 0; s < static_cast<std::int32_t>(w.streams.size()); ++s) {
          const std::int32_t g = last_on_stream_before(s, op.ts_ns);
          if (g >= 0) op.waits.push_back(g);
        }
        op.blocking = !op.waits.empty();
      }
    }
  }

  if (shared_correlation > 0)
    w.notes.push_back(std::to_string(shared_correlation) +
                      " GPU event(s) share their \"correlation\" id with an earlier one (a profiler gives each launch its own: the "
                      "trace was edited or merged): each is replayed without a launch call, in its stream's order and not before its measured start");
  if (nccl_of_unknown_kind > 0)
    w.notes.push_back(std::to_string(nccl_of_unknown_kind) +
                      " NCCL kernel(s) say neither in their name (e.g. ncclDevKernel_Generic) nor in a \"Collective name\" arg which "
                      "operation they run: replayed at their measured duration, not modelled on the topology");
  if (waits_on_unknown_streams > 0)
    w.notes.push_back(std::to_string(waits_on_unknown_streams) +
                      " cudaStreamWaitEvent call(s) make a stream wait on one with no GPU work in the trace: those waits are not replayed");
  size_t lost_launches = 0;
  for (const auto& t : w.threads)
    for (const auto& op : t.ops)
      if (op.gpu_op < 0 && w.names[op.name].find("LaunchKernel") != std::string::npos) ++lost_launches;
  if (lost_launches > 0)
    w.notes.push_back(std::to_string(lost_launches) +
                      " kernel launch call(s) have no kernel in the trace (events the profiler lost or a filter removed): their GPU "
                      "work is not replayed");

  // Iterations: ProfilerStep#N marks, in time order.
  for (const json* e : steps) {
    Iteration it;
    it.name = (*e)["name"].get<std::string>();
    it.ts_ns = to_ns(*e, "ts");
    it.dur_ns = to_ns(*e, "dur");
    const std::string tid = ((*e).contains("pid") ? id_string((*e)["pid"]) : "?") + "/" + ((*e).contains("tid") ? id_string((*e)["tid"]) : "?");
    auto ti = thread_index.find(tid);
    it.thread = ti == thread_index.end() ? -1 : ti->second;
    w.iterations.push_back(std::move(it));
  }
  std::sort(w.iterations.begin(), w.iterations.end(), [](const Iteration& a, const Iteration& b) { return a.ts_ns < b.ts_ns; });
  // Touching steps can overlap by a nanosecond once start and duration are each rounded
  // from microseconds: that is rounding, not overlap.
  for (size_t i = 1; i < w.iterations.size(); ++i) {
    auto& a = w.iterations[i - 1];
    const std::int64_t over = a.ts_ns + a.dur_ns - w.iterations[i].ts_ns;
    if (over > 0 && over <= 2) a.dur_ns -= over;
  }
  // Without distributedInfo the trace still says how many ranks its collectives spanned:
  // the largest group is taken as the job (a 2-rank all-reduce replayed on 1 rank was a
  // local copy), and the run says so.
  if (!has_distributed_info) {
    int largest = 1;
    for (const auto& c : w.collectives) {
      largest = std::max({largest, c.group_size, c.peer + 1});
      for (const auto& part : c.batch) largest = std::max(largest, part.peer + 1);
    }
    for (const auto& comm : w.communicators)
      for (int r : comm.ranks) largest = std::max(largest, r + 1);
    if (largest > 1) {
      w.world_size = largest;
      w.world_size_from_groups = true;
      w.notes.push_back("no distributedInfo: the job is taken to have " + std::to_string(largest) +
                        " ranks, from its collectives' groups and peers (--ranks N sets it)");
    }
  }
  // A process group whose collectives give a size smaller than the job but whose ranks the
  // trace does not list (no "Process Group Ranks", or a list cut short that does not
  // continue with one stride) is taken as groups of that many consecutive ranks, with a
  // note, as a layout that cannot be tiled is replayed. Without it the group was the whole
  // job. A list cut short whose ranks are not in this rank's group is refused.
  for (size_t ci = 0; ci < w.communicators.size(); ++ci) {
    Communicator& comm = w.communicators[ci];
    if (!comm.ranks.empty()) continue;
    int size = 0;
    size_t size_event = 0;
    for (size_t k = 0; k < w.collectives.size(); ++k) {
      const Collective& c = w.collectives[k];
      if (c.communicator != static_cast<std::int32_t>(ci) || c.group_size <= 0) continue;
      if (size == 0) {
        size = c.group_size;
        size_event = collective_event[k];
      } else if (c.group_size != size) {
        input_error(path, "traceEvents[" + std::to_string(collective_event[k]) + "].args",
                    "\"Group size\" = " + std::to_string(c.group_size) + " but that of traceEvents[" + std::to_string(size_event) +
                        "], on the same process group \"" + shown_text(comm.name) + "\", is " + std::to_string(size) +
                        " (the trace does not list the group's ranks)");
      }
    }
    if (size == 0 || size >= w.world_size) continue;
    const std::string place = "traceEvents[" + std::to_string(size_event) + "].args";
    if (w.world_size % size != 0)
      input_error(path, place,
                  "\"Group size\" = " + std::to_string(size) + " of the job's " + std::to_string(w.world_size) +
                      " ranks, and the trace does not list the group's ranks (\"Process Group Ranks\"): groups of " + std::to_string(size) +
                      " consecutive ranks cannot make up the job");
    const int first = w.rank / size * size;
    for (int m = first; m < first + size; ++m) comm.ranks.push_back(m);
    comm.ranks_guessed = true;
    const std::string list = size <= 4 ? "[" + rank_list_text(comm.ranks) + "]"
                                       : "[" + std::to_string(first) + ", " + std::to_string(first + 1) + ", ..., " + std::to_string(first + size - 1) + "]";
    if (auto sh = shown_ranks.find(static_cast<std::int32_t>(ci)); sh != shown_ranks.end())
      for (int r : sh->second.first)
        if (r < first || r >= first + size)
          input_error(path, "traceEvents[" + std::to_string(sh->second.second) + "].args",
                      "\"Process Group Ranks\" is cut short, its ranks do not continue with one stride, and it shows rank " + std::to_string(r) +
                          ", which is not in rank " + std::to_string(w.rank) + "'s group of " + std::to_string(size) + " consecutive ranks (" + list +
                          "): the group's members cannot be told");
    w.notes.push_back("process group \"" + shown_text(comm.name) + "\" has " + std::to_string(size) + " of the job's " + std::to_string(w.world_size) +
                      " ranks (\"Group size\") but the trace does not list them: taken as groups of " + std::to_string(size) +
                      " consecutive ranks (" + list + " for rank " + std::to_string(w.rank) + ")");
  }
  // A process group whose every collective gives PyTorch's "Seq", increasing, is numbered by
  // it: ranks whose profiler windows begin or end at different collectives are then still
  // matched (the replay runs those outside another member's window at their measured
  // duration). Otherwise by order, as without "Seq", and the note says why.
  struct SeqTally {
    size_t given = 0, total = 0, last = 0;  // collectives giving "Seq", all of them, the last that gave one
    std::string disorder;                   // where "Seq" first fails to increase
  };
  std::vector<SeqTally> tally(w.communicators.size());
  for (size_t k = 0; k < w.collectives.size(); ++k) {
    if (w.collectives[k].kind == collective::Kind::send_recv) continue;
    SeqTally& t = tally[w.collectives[k].communicator];
    ++t.total;
    if (trace_seq[k] < 0) continue;
    if (t.given++ > 0 && trace_seq[k] <= trace_seq[t.last] && t.disorder.empty())
      t.disorder = "\"Seq\" " + std::to_string(trace_seq[k]) + " (traceEvents[" + std::to_string(seq_event[k]) + "]) launches after \"Seq\" " +
                   std::to_string(trace_seq[t.last]) + " (traceEvents[" + std::to_string(seq_event[t.last]) + "])";
    t.last = k;
  }
  for (size_t ci = 0; ci < w.communicators.size(); ++ci) {
    const SeqTally& t = tally[ci];
    if (t.given == 0) continue;
    if (t.given == t.total && t.disorder.empty()) {
      w.communicators[ci].seq_from_trace = true;
    } else {
      w.notes.push_back("process group \"" + shown_text(w.communicators[ci].name) + "\": " +
                        (t.disorder.empty() ? std::to_string(t.given) + " of its " + std::to_string(t.total) + " collectives give PyTorch's \"Seq\""
                                            : t.disorder) +
                        ", so its collectives are matched across ranks by their order in the trace");
    }
  }
  for (size_t k = 0; k < w.collectives.size(); ++k)
    if (auto& c = w.collectives[k]; c.kind != collective::Kind::send_recv && w.communicators[c.communicator].seq_from_trace)
      c.seq = static_cast<std::uint64_t>(trace_seq[k]);
  // A send's or receive's peer, checked here to name its event (Workload::check() names the
  // IR's collectives[i]).
  for (size_t k = 0; k < w.collectives.size(); ++k) {
    const Collective& c = w.collectives[k];
    if (c.peer < 0) continue;
    if (const std::string why = w.peer_problem(c); !why.empty())
      input_error(path, "traceEvents[" + std::to_string(peer_event.count(k) ? peer_event[k] : collective_event[k]) + "].args",
                  std::string(c.p2p_role == P2pRole::send ? "\"Dst Rank\"" : "\"Src Rank\"") + " = " + std::to_string(c.peer) + " " + why);
  }
  size_t batched = 0, batched_parts = 0;
  for (const auto& [k, events_of] : batch_event) {
    const Collective& c = w.collectives[k];
    ++batched;
    batched_parts += c.batch.size();
    for (size_t p = 0; p < c.batch.size(); ++p)
      if (const std::string why = w.peer_problem(c.batch[p].role, c.batch[p].peer, c.communicator); !why.empty())
        input_error(path, "traceEvents[" + std::to_string(events_of[p]) + "].args",
                    std::string(c.batch[p].role == P2pRole::send ? "\"Dst Rank\"" : "\"Src Rank\"") + " = " + std::to_string(c.batch[p].peer) + " " + why);
  }
  if (batched)
    w.notes.push_back(std::to_string(batched) + " batched send/recv kernel(s) (batch_isend_irecv) take the peers and sizes of their " +
                      std::to_string(batched_parts) + " sends and receives from the record_param_comms their thread recorded before launching them");
  w.check();
  return w;
}

Workload load_workload(const std::string& path) {
  const json doc = parse_trace_file(path);
  // composim's own IR is written or edited by people too: a key given twice is an error
  // there, as in topologies, so it is read again with that check. Profiler traces are
  // machine-written (and large): parsed as they are.
  if (doc.is_object() && doc.contains("composim_workload")) {
    std::istringstream in(read_maybe_gzip(path));
    return workload_from_json(parse_json_input(in, path), path);
  }
  return kineto_from_json(doc, path);
}

}  // namespace composim::trace
