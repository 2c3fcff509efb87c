// The recorded search's lab; see recorded.hpp.
#include "tuner/search/recorded.hpp"

#include <algorithm>
#include <numeric>

namespace beamlab::tuner {

namespace {

// The verdict a recorded failure is answered with.
Verdict verdict_of(Status s) {
  switch (s) {
  case Status::wrong_result: return Verdict::wrong_result;
  case Status::rejected: return Verdict::rejected;
  case Status::compile_error: return Verdict::compile_error;
  case Status::crashed: return Verdict::crashed;
  case Status::timeout: return Verdict::timeout;
  case Status::limit: return Verdict::limit;
  case Status::violation: return Verdict::violation;
  case Status::error: return Verdict::error;
  default: return Verdict::ok;
  }
}

// The recorded plan failed before it had code.
bool failed_to_compile(const Candidate& c) {
  return c.status == Status::rejected || c.status == Status::compile_error ||
         (c.code_hash == 0 && verdict_of(c.status) != Verdict::ok &&
          c.status != Status::wrong_result);
}

const char* const kMissing = "not in the recording";

} // namespace

std::vector<double> search_samples(const Candidate& c, int runs) {
  size_t n = std::min(c.samples_ms.size(),
                      c.opts.empty() ? size_t{1} : static_cast<size_t>(std::max(1, runs)));
  return {c.samples_ms.begin(), c.samples_ms.begin() + static_cast<std::ptrdiff_t>(n)};
}

RecordedLab::RecordedLab(const Recording& recording, Calibration calibration)
    : recording_(recording), calibration_(calibration),
      lanes_(static_cast<size_t>(std::max(1, recording.sandboxes)), 0.0) {}

double RecordedLab::now_s() {
  // Whatever asks the time waits for the compiles in flight: the search collects every
  // compile of a batch before it times any.
  clock_s_ = std::max(clock_s_, *std::max_element(lanes_.begin(), lanes_.end()));
  return clock_s_;
}

void RecordedLab::charge(double seconds) {
  now_s();
  clock_s_ += calibration_.scale * seconds + calibration_.overhead_s;
  raw_s_ += seconds;
  ++requests_;
}

const Candidate* RecordedLab::find(const std::vector<Opt>& opts) const {
  auto it = recording_.candidates.find(beamlab::to_string(opts));
  return it == recording_.candidates.end() ? nullptr : &it->second;
}

Expected<ReferenceRun> RecordedLab::reference(int /*id*/, double /*run_timeout_s*/) {
  const Candidate* c = find({});
  if (!c || c->samples_ms.empty())
    return make_unexpected(std::string("the recording has no time for the unoptimized kernel"));
  ReferenceRun r;
  r.compile_ms = c->compile_ms;
  // The time the search had for it: not the best of all its samples, which may include the
  // finalists' rounds it took part in later (a reference that ranked second live would rank
  // first here).
  r.check_ms.assign(static_cast<size_t>(std::max(1, recording_.checks)),
                    search_samples(*c, recording_.runs).front());
  charge(r.compile_ms / 1000 + std::accumulate(r.check_ms.begin(), r.check_ms.end(), 0.0) / 1000);
  return r;
}

std::future<Compiled> RecordedLab::compile(int /*id*/, std::vector<Opt> opts) {
  Compiled o;
  // The lane free first takes it, starting no earlier than now.
  auto lane = std::min_element(lanes_.begin(), lanes_.end());
  o.at = {static_cast<int>(lane - lanes_.begin()), 0};
  const Candidate* c = find(opts);
  double cost = 0;
  if (!c) {
    ++missing_;
    o.verdict = Verdict::error;
    o.reason = kMissing;
  } else {
    cost = c->compile_ms / 1000;
    if (failed_to_compile(*c)) {
      o.verdict = c->status == Status::rejected ? Verdict::rejected : verdict_of(c->status);
      o.reason = c->error;
    } else {
      o.compile_ms = c->compile_ms;
      o.code_hash = c->code_hash;
      o.code_bytes = c->code_bytes;
    }
  }
  *lane = std::max(*lane, clock_s_) + calibration_.scale * cost + calibration_.overhead_s;
  raw_s_ += cost;
  ++requests_;
  std::promise<Compiled> done;
  done.set_value(std::move(o));
  return done.get_future();
}

int RecordedLab::iterations_late(const std::vector<Opt>& opts) const {
  // By how much, not when: another strategy played back proposes it in another iteration.
  const Candidate* c = find(opts);
  return c && c->settled_in > c->iteration ? c->settled_in - c->iteration : 0;
}

Timed RecordedLab::time(int id, const std::vector<Opt>& opts, Placement& at, const Timing& timing) {
  Timed o;
  o.at = at;
  const Candidate* c = find(opts);
  bool untimed = c && c->samples_ms.empty() && verdict_of(c->status) == Verdict::ok;
  if (!c || untimed) {
    ++missing_;
    o.verdict = Verdict::error;
    o.reason = c ? "never timed in the recording" : kMissing;
    return o;
  }
  if (timing.round) {
    // The recorded round's median, round by round; past the recorded rounds (a finalist the
    // recorded search didn't re-measure), the median of its search samples.
    size_t r = rounds_taken_[id]++;
    auto it = recording_.rounds.find(beamlab::to_string(opts));
    double ms = it != recording_.rounds.end() && r < it->second.size()
                    ? it->second[r]
                    : quantile(search_samples(*c, recording_.runs), 0.5);
    if (ms <= 0) {
      o.verdict = Verdict::error;
      o.reason = "failed in the recorded round";
      return o;
    }
    o.samples_ms = {ms};
    charge(ms * (timing.warmup + std::max(1, timing.runs)) / 1000);
    return o;
  }
  o.verdict = verdict_of(c->status);
  o.reason = c->error;
  o.max_error = c->max_error;
  std::vector<double> samples = search_samples(*c, recording_.runs);
  double first = samples.empty() ? 0 : samples.front();
  double cost = first * (recording_.checks + std::max(0, recording_.warmup - 1));
  if (o.verdict == Verdict::ok) {
    for (double ms : samples) {
      o.samples_ms.push_back(ms);
      cost += ms;
      if (timing.cutoff_ms > 0 && ms > timing.cutoff_ms) {
        o.early_stop = true;
        break;
      }
    }
  }
  charge(cost / 1000);
  return o;
}

} // namespace beamlab::tuner
