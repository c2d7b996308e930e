#pragma once
// Errors: one exception type carrying a user-facing message, and the always-on
// check macro. `main` catches gcnlab::Error, prints "gcnlab: error: <what>" once
// and aborts the job (docs/design.md principle 6).

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace gcnlab {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws gcnlab::Error with a formatted message.
template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> fmt, Args&&... args) {
  throw Error(fmt::format(fmt, std::forward<Args>(args)...));
}

}  // namespace gcnlab

// Always-on assertion for conditions that depend on user input or the
// environment. The message is what the user reads.
#define GCNLAB_CHECK(cond, ...)          \
  do {                                   \
    if (!(cond)) ::gcnlab::fail(__VA_ARGS__); \
  } while (0)

// Internal invariant (a bug in gcnlab if it fires); always on, cheap.
#define GCNLAB_ASSERT(cond)                                                    \
  do {                                                                         \
    if (!(cond))                                                               \
      ::gcnlab::fail("internal error: {} ({}:{})", #cond, __FILE__, __LINE__); \
  } while (0)
