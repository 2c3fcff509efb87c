// Errors, in the three kinds the project distinguishes (Halide's Error.h is the model):
//   * UserError     - the caller's input was wrong; the message says what and how to fix it.
//   * InternalError - a bug in beamlab; raised by internal_assert with the failed condition.
//   * RuntimeFailure- the world failed us (I/O, JIT, database).
// Reports are built by streaming into a temporary, which throws when the statement ends:
//   user_assert(axis < rank) << "sum: axis " << axis << " is out of range for rank " << rank;
// Where failure is normal (parsing, cache lookups, BEAM candidates) return Expected<T> instead.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

#include <tl/expected.hpp>

namespace beamlab {

/// The caller's input was wrong. what() is one line naming the input and the fix.
class UserError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A broken invariant inside beamlab: always a bug.
class InternalError : public std::logic_error {
public:
  using std::logic_error::logic_error;
};

/// An operation on the outside world (files, JIT, database) failed.
class RuntimeFailure : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The result of an operation whose failure is ordinary data, not an exception.
template <class T, class E = std::string>
using Expected = tl::expected<T, E>;
using tl::make_unexpected;

enum class ErrorKind { User, Internal, Runtime };

/// Collects a message by streaming and throws the matching exception from its destructor,
/// at the end of the full expression that created it.
class ErrorReport {
public:
  ErrorReport(ErrorKind kind, const char* file, int line, const char* condition);
  ErrorReport(const ErrorReport&) = delete;
  ErrorReport& operator=(const ErrorReport&) = delete;
  ~ErrorReport() noexcept(false);

  template <class T>
  ErrorReport& operator<<(const T& value) {
    msg_ << value;
    return *this;
  }

private:
  ErrorKind kind_;
  std::ostringstream msg_;
};

} // namespace beamlab

// The `if (c) {} else` form keeps these safe inside unbraced if/else.
#define user_assert(c)                                                                             \
  if (c) {                                                                                         \
  } else                                                                                           \
    ::beamlab::ErrorReport(::beamlab::ErrorKind::User, __FILE__, __LINE__, nullptr)
#define user_error ::beamlab::ErrorReport(::beamlab::ErrorKind::User, __FILE__, __LINE__, nullptr)
#define internal_assert(c)                                                                         \
  if (c) {                                                                                         \
  } else                                                                                           \
    ::beamlab::ErrorReport(::beamlab::ErrorKind::Internal, __FILE__, __LINE__, #c)
#define internal_error                                                                             \
  ::beamlab::ErrorReport(::beamlab::ErrorKind::Internal, __FILE__, __LINE__, nullptr)
#define runtime_error_report                                                                       \
  ::beamlab::ErrorReport(::beamlab::ErrorKind::Runtime, __FILE__, __LINE__, nullptr)
