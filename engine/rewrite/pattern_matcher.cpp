// Applying a rule set to one node; see pattern_matcher.hpp.
#include "engine/rewrite/pattern_matcher.hpp"

namespace beamlab {

UOpPtr PatternMatcher::rewrite(const UOpPtr& u, CtxRef ctx, const Rule<RewriteFn>** fired) const {
  for (uint32_t i : candidates(u->op())) {
    const Rule<RewriteFn>& r = rule(i);
    Captures caps;
    if (!r.pat.match(u, caps)) continue;
    UOpPtr out = r.fn(Match{u, caps, ctx});
    if (!out || out == u) continue;
    if (fired) *fired = &r;
    return out;
  }
  return nullptr;
}

} // namespace beamlab
