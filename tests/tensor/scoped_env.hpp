// An environment variable set for a scope and restored after: knobs (engine/support/knobs.hpp)
// are read when asked, so a test may switch one for the code it calls.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace beamlab::test {

class ScopedEnv {
public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
  const char* name_;
  std::optional<std::string> old_;
};

} // namespace beamlab::test
