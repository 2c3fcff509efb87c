// Throwing error reports; see error.hpp.
#include "engine/support/error.hpp"

#include <exception>

namespace beamlab {

ErrorReport::ErrorReport(ErrorKind kind, const char* file, int line, const char* condition)
    : kind_(kind) {
  if (kind_ != ErrorKind::Internal) return;
  msg_ << "internal error at " << file << ":" << line;
  if (condition) msg_ << ", condition failed: " << condition;
  msg_ << ": ";
}

ErrorReport::~ErrorReport() noexcept(false) {
  // Never throw while another exception unwinds the stack: that would terminate.
  if (std::uncaught_exceptions() > 0) return;
  switch (kind_) {
  case ErrorKind::User: throw UserError(msg_.str());
  case ErrorKind::Internal: throw InternalError(msg_.str());
  case ErrorKind::Runtime: throw RuntimeFailure(msg_.str());
  }
}

} // namespace beamlab
