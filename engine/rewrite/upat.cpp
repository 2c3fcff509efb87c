// Pattern matching; see upat.hpp.
#include "engine/rewrite/upat.hpp"

#include <algorithm>

#include "engine/support/error.hpp"

namespace beamlab {

const UOpPtr* Captures::find(std::string_view name) const {
  for (const auto& [n, u] : bound_)
    if (n == name) return &u;
  return nullptr;
}

const UOpPtr& Captures::operator[](std::string_view name) const {
  const UOpPtr* u = find(name);
  internal_assert(u) << "pattern capture '" << name << "' is not bound";
  return *u;
}

UPat::UPat(OpSet ops, std::vector<UPat> src, SrcMode mode)
    : ops_(ops), src_(std::move(src)), mode_(mode) {
  internal_assert(mode_ != SrcMode::Each || src_.size() == 1) << "SrcMode::Each takes one pattern";
}

UPat UPat::var(std::string name) {
  UPat p;
  p.name_ = std::move(name);
  return p;
}

UPat UPat::cvar(std::string name) { return UPat(Op::Const).named(std::move(name)); }

UPat UPat::const_value(int64_t v) {
  UPat p(Op::Const);
  p.arg_if([v](const Arg& a) {
    if (a.kind() == Arg::Kind::Bool) return int64_t{a.as_bool()} == v;
    return a.is_int() && a.as_int() == v;
  });
  return p;
}

UPat UPat::ops(OpSet ops, std::string name) {
  UPat p(ops, {}, SrcMode::Any);
  return p.named(std::move(name));
}

UPat& UPat::named(std::string name) {
  name_ = std::move(name);
  return *this;
}

UPat& UPat::dtypes(std::vector<DType> dtypes) {
  dtypes_ = std::move(dtypes);
  return *this;
}

UPat& UPat::dtype_if(std::function<bool(DType)> pred) {
  dtype_pred_ = std::move(pred);
  return *this;
}

UPat& UPat::arg(Arg a) {
  arg_ = std::move(a);
  return *this;
}

UPat& UPat::arg_if(std::function<bool(const Arg&)> pred) {
  arg_pred_ = std::move(pred);
  return *this;
}

bool UPat::match_self(const UOpPtr& u) const {
  if (!ops_.empty() && !ops_.contains(u->op())) return false;
  if (!dtypes_.empty() && std::find(dtypes_.begin(), dtypes_.end(), u->dtype()) == dtypes_.end())
    return false;
  if (dtype_pred_ && !dtype_pred_(u->dtype())) return false;
  if (arg_ && !(*arg_ == u->arg())) return false;
  if (arg_pred_ && !arg_pred_(u->arg())) return false;
  return true;
}

bool UPat::match(const UOpPtr& u, Captures& caps) const {
  if (!match_self(u)) return false;
  size_t mark = caps.bound_.size();
  if (!name_.empty()) {
    if (const UOpPtr* prev = caps.find(name_)) {
      if (*prev != u) return false;
    } else {
      caps.bound_.emplace_back(name_, u);
    }
  }
  if (match_sources(u, caps)) return true;
  caps.bound_.resize(mark);
  return false;
}

bool UPat::match_sources(const UOpPtr& u, Captures& caps) const {
  const auto& src = u->src();
  switch (mode_) {
  case SrcMode::Any: return true;
  case SrcMode::Each:
    if (src.empty()) return false;
    for (const UOpPtr& s : src)
      if (!src_[0].match(s, caps)) return false;
    return true;
  case SrcMode::Exact:
    if (src.size() != src_.size()) return false;
    for (size_t i = 0; i < src.size(); ++i)
      if (!src_[i].match(src[i], caps)) return false;
    return true;
  case SrcMode::Permute: {
    if (src.size() != src_.size()) return false;
    std::vector<bool> used(src.size(), false);
    return match_permuted(src, used, 0, caps);
  }
  }
  return false;
}

// Backtracking: pattern source i tries every unused node source; captures made by a failed
// branch are dropped before the next one.
bool UPat::match_permuted(const std::vector<UOpPtr>& src, std::vector<bool>& used, size_t i,
                          Captures& caps) const {
  if (i == src_.size()) return true;
  for (size_t j = 0; j < src.size(); ++j) {
    if (used[j]) continue;
    size_t mark = caps.bound_.size();
    if (src_[i].match(src[j], caps)) {
      used[j] = true;
      if (match_permuted(src, used, i + 1, caps)) return true;
      used[j] = false;
    }
    caps.bound_.resize(mark);
  }
  return false;
}

UPat alu_pat(Op op, std::vector<UPat> src) {
  return UPat(op, std::move(src),
              is_commutative(op) ? UPat::SrcMode::Permute : UPat::SrcMode::Exact);
}
UPat operator+(const UPat& a, const UPat& b) { return alu_pat(Op::Add, {a, b}); }
UPat operator-(const UPat& a, const UPat& b) { return alu_pat(Op::Sub, {a, b}); }
UPat operator*(const UPat& a, const UPat& b) { return alu_pat(Op::Mul, {a, b}); }
UPat operator/(const UPat& a, const UPat& b) { return alu_pat(Op::Idiv, {a, b}); }
UPat operator%(const UPat& a, const UPat& b) { return alu_pat(Op::Mod, {a, b}); }

} // namespace beamlab
