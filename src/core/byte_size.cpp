#include "slimtrain/core/byte_size.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "slimtrain/core/error.hpp"

namespace slimtrain {

std::uint64_t parse_byte_size(const std::string& text, const std::string& option) {
  const auto refuse = [&] {
    SLIMTRAIN_THROW(ConfigError, option, ": '", text,
                    "' is not a size; give bytes or a number with a unit: 5GB, 500MB, 2GiB "
                    "(KB, MB, GB, TB are powers of 1000; KiB, MiB, GiB, TiB of 1024)");
  };
  std::size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
    ++end;
  if (end == 0) refuse();
  char* stop = nullptr;
  const std::string number = text.substr(0, end);
  const double value = std::strtod(number.c_str(), &stop);
  if (stop != number.c_str() + number.size() || !std::isfinite(value)) refuse();
  std::string unit;
  for (std::size_t i = end; i < text.size(); ++i)
    if (text[i] != ' ')
      unit += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  double scale = 0;
  const char* const prefixes = "KMGT";
  if (unit.empty() || unit == "B") scale = 1;
  for (int i = 0; i < 4 && scale == 0; ++i) {
    if (unit == std::string(1, prefixes[i]) + "B") scale = std::pow(1000.0, i + 1);
    if (unit == std::string(1, prefixes[i]) + "IB") scale = std::pow(1024.0, i + 1);
  }
  if (scale == 0) refuse();
  const double bytes = value * scale;
  if (bytes < 1 || bytes > 1e18)
    SLIMTRAIN_THROW(ConfigError, option, ": '", text, "' is not between 1 byte and 1 EB");
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace slimtrain
