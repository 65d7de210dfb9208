#include "models/error.hpp"

namespace composim {

void input_error(std::string_view file, std::string_view place, std::string_view what) {
  std::string msg;
  if (!file.empty()) msg.append(file).append(": ");
  if (!place.empty()) msg.append(place).append(": ");
  msg.append(what);
  throw InputError(msg);
}

}  // namespace composim
