// The model subcommand; see model_command.hpp.
#include "apps/model_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "apps/cli_checks.hpp"
#include "apps/output.hpp"
#include "apps/tune_command.hpp"
#include "db/database.hpp"
#include "engine/support/error.hpp"
#include "engine/support/statistics.hpp"
#include "tuner/store/records.hpp"
#include "tuner/store/training.hpp"

namespace beamlab::cli {
namespace {

struct EvalArgs {
  std::string db;
  int folds = 5;
  int threads = 0; ///< 0: the thread count most of the device's tunings ran at
  std::string objective = "rank";
  int trees = tuner::CostModelOptions{}.trees;
  int depth = tuner::CostModelOptions{}.depth;
  bool ok_only = false; ///< leave out the candidates stopped early (slow)
  OutputFormat format = OutputFormat::Text;
};

/// How the model ranked one held-out kernel's plans.
struct KernelScore {
  const tuner::JournalKernel* kernel = nullptr;
  int fold = 0;
  double spearman = 0;
  double top1 = 1;          ///< the predicted best's measured time over the measured best
  bool best_in_top = false; ///< the measured best among the predicted fastest quarter
};

/// The kernels a model can be judged on: two or more plans with different times.
bool rankable(const tuner::JournalKernel& k) {
  return std::any_of(k.samples.begin(), k.samples.end(),
                     [&](const tuner::JournalSample& s) { return s.ms != k.samples[0].ms; });
}

std::string tune_hint(const std::string& path) {
  return "tune some kernels first with 'beamlab tune corpora/quick.json --db " + shell_word(path) +
         "'";
}

/// The database at --db, which must exist: an evaluation never creates or changes one.
db::Database open_journal(const std::string& flag) {
  std::string path = db_path(flag);
  user_assert(::access(path.c_str(), R_OK) == 0)
      << "no database at '" << path << "': " << tune_hint(path) << ", or pass --db FILE";
  return db::Database(path, db::Database::Access::read_only);
}

/// --threads, else the thread count most of the device's searches ran at (the larger on a tie).
int pick_threads(db::Database& db, const std::string& device, int flag) {
  std::vector<std::pair<int, int>> counts = tuner::journal_thread_counts(db, device);
  user_assert(!counts.empty()) << "the database '" << db.path()
                               << "' has no tunings on this device: " << tune_hint(db.path());
  if (flag == 0)
    return std::max_element(counts.begin(), counts.end(),
                            [](const auto& a, const auto& b) {
                              return std::tie(a.second, a.first) < std::tie(b.second, b.first);
                            })
        ->first;
  std::string have;
  for (const auto& [threads, n] : counts)
    have += fmt::format("{}{}", have.empty() ? "" : ", ", threads);
  user_assert(
      std::any_of(counts.begin(), counts.end(), [&](const auto& c) { return c.first == flag; }))
      << "--threads " << flag << ": the database '" << db.path()
      << "' has no tunings on this device at " << flag << " threads (it has some at " << have
      << ")";
  return flag;
}

/// Scores one held-out kernel's plans as ranked by `predicted`.
KernelScore score(const tuner::JournalKernel& k, int fold, const std::vector<double>& predicted) {
  std::vector<double> measured;
  for (const tuner::JournalSample& s : k.samples) measured.push_back(s.ms);
  double best = *std::min_element(measured.begin(), measured.end());
  std::vector<size_t> order(measured.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(predicted[a], a) < std::tie(predicted[b], b);
  });
  size_t quarter = std::max<size_t>(1, (order.size() + 3) / 4);
  bool best_in_top = std::any_of(order.begin(), order.begin() + static_cast<long>(quarter),
                                 [&](size_t i) { return measured[i] == best; });
  return {&k, fold, tuner::rank_correlation(predicted, measured), measured[order[0]] / best,
          best_in_top};
}

struct Evaluation {
  std::vector<KernelScore> scores; ///< in journal order
  std::vector<double> train_s;     ///< per fold
  std::vector<size_t> train_rows;  ///< per fold
};

/// K-fold cross-validation by kernel: kernel i in hash order (so folds don't follow the
/// corpus) is in fold i mod K.
Evaluation cross_validate(const std::vector<const tuner::JournalKernel*>& kernels, int folds,
                          const tuner::CostModelOptions& options) {
  std::vector<size_t> by_hash(kernels.size());
  for (size_t i = 0; i < by_hash.size(); ++i) by_hash[i] = i;
  std::sort(by_hash.begin(), by_hash.end(),
            [&](size_t a, size_t b) { return kernels[a]->hash < kernels[b]->hash; });
  std::vector<int> fold_of(kernels.size());
  for (size_t rank = 0; rank < by_hash.size(); ++rank)
    fold_of[by_hash[rank]] = static_cast<int>(rank % static_cast<size_t>(folds));

  Evaluation e;
  e.scores.resize(kernels.size());
  for (int fold = 0; fold < folds; ++fold) {
    tuner::CostModel model(options);
    for (size_t i = 0; i < kernels.size(); ++i)
      if (fold_of[i] != fold) tuner::add_samples(model, *kernels[i]);
    auto t0 = std::chrono::steady_clock::now();
    bool fitted = model.fit();
    e.train_s.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    e.train_rows.push_back(model.size());
    internal_assert(fitted) << "fold " << fold << ": no training kernel has two different times";
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (fold_of[i] != fold) continue;
      std::vector<tuner::Features> rows;
      for (const tuner::JournalSample& s : kernels[i]->samples) rows.push_back(s.x);
      e.scores[i] = score(*kernels[i], fold, model.predict(rows));
    }
  }
  return e;
}

/// What the scores add up to over the held-out kernels.
struct Summary {
  size_t plans = 0;
  double median = 0, q1 = 0, q3 = 0;                          ///< of the Spearman correlations
  int within_2pct = 0, within_10pct = 0, best_in_top = 0;     ///< kernels
  double train_mean_s = 0, train_total_s = 0, train_rows = 0; ///< per fold, on average
};

Summary summarize(const std::vector<const tuner::JournalKernel*>& used, const Evaluation& e) {
  Summary s;
  for (const auto* k : used) s.plans += k->samples.size();
  std::vector<double> rho;
  for (const KernelScore& k : e.scores) {
    rho.push_back(k.spearman);
    s.within_2pct += k.top1 <= 1.02;
    s.within_10pct += k.top1 <= 1.10;
    s.best_in_top += k.best_in_top;
  }
  s.median = quantile(rho, 0.5), s.q1 = quantile(rho, 0.25), s.q3 = quantile(rho, 0.75);
  for (size_t f = 0; f < e.train_s.size(); ++f) {
    s.train_total_s += e.train_s[f];
    s.train_rows += static_cast<double>(e.train_rows[f]) / static_cast<double>(e.train_s.size());
  }
  s.train_mean_s = s.train_total_s / static_cast<double>(e.train_s.size());
  return s;
}

std::string objective_name(const EvalArgs& a) {
  return a.objective == "rank" ? "rank:pairwise" : "regression";
}

void print_eval_text(const EvalArgs& a, const std::string& path, const std::string& device,
                     int threads, const tuner::Journal& journal, const Evaluation& e,
                     const Summary& s) {
  fmt::print("model eval: {}-fold cross-validation by kernel on {} (device {}, {} threads)\n"
             "  {} kernels, {} measured plans{} (journal read in {:.2f} s); objective {}, {} "
             "trees of depth {}\n",
             a.folds, path, device.substr(0, 12), threads, e.scores.size(), s.plans,
             a.ok_only ? " timed to the end" : "", journal.stats.seconds, objective_name(a),
             a.trees, a.depth);
  fmt::print("{:<32} {:>4} {:>6} {:>9} {:>8} {:>10}\n", "kernel", "fold", "plans", "spearman",
             "top-1", "best in 25%");
  for (const KernelScore& k : e.scores)
    fmt::print("{:<32} {:>4} {:>6} {:>9.3f} {:>7.3f}x {:>10}\n", k.kernel->name, k.fold + 1,
               k.kernel->samples.size(), k.spearman, k.top1, k.best_in_top ? "yes" : "no");
  size_t n = e.scores.size();
  auto share = [&](int count) {
    return fmt::format("{:.0f}% ({} of {})", 100.0 * count / static_cast<double>(n), count, n);
  };
  fmt::print("Spearman over kernels: median {:.3f}, quartiles {:.3f} .. {:.3f}\n", s.median, s.q1,
             s.q3);
  fmt::print("top-1 (the predicted best) within 2% of the measured best: {}; within 10%: {}\n",
             share(s.within_2pct), share(s.within_10pct));
  fmt::print("recall@25% (the measured best among the predicted fastest quarter): {}\n",
             share(s.best_in_top));
  fmt::print("training: {:.3f} s a fold on average ({:.0f} plans), {:.2f} s in all\n",
             s.train_mean_s, s.train_rows, s.train_total_s);
}

void print_eval_json(const EvalArgs& a, const std::string& path, const std::string& device,
                     int threads, const tuner::Journal& journal, const Evaluation& e,
                     const Summary& s) {
  Json doc = json_document("model-eval");
  doc["db"] = path;
  doc["device"] = device;
  doc["threads"] = threads;
  doc["folds"] = a.folds;
  doc["objective"] = objective_name(a);
  doc["trees"] = a.trees;
  doc["depth"] = a.depth;
  doc["ok_only"] = a.ok_only;
  doc["plans"] = s.plans;
  doc["load_s"] = json_number(journal.stats.seconds);
  Json& rows = doc["kernels"] = Json::array();
  for (const KernelScore& k : e.scores)
    rows.push_back({{"kernel", k.kernel->name},
                    {"hash", k.kernel->hash},
                    {"fold", k.fold + 1},
                    {"plans", k.kernel->samples.size()},
                    {"spearman", json_number(k.spearman)},
                    {"top1", json_number(k.top1)},
                    {"best_in_top_quarter", k.best_in_top}});
  auto n = static_cast<double>(e.scores.size());
  doc["spearman"] = {
      {"median", json_number(s.median)}, {"q1", json_number(s.q1)}, {"q3", json_number(s.q3)}};
  doc["top1_within_2pct"] = s.within_2pct / n;
  doc["top1_within_10pct"] = s.within_10pct / n;
  doc["recall_at_25pct"] = s.best_in_top / n;
  doc["train_s"] = {{"mean", json_number(s.train_mean_s)},
                    {"total", json_number(s.train_total_s)},
                    {"rows", json_number(s.train_rows)}};
  print_json(doc);
}

void eval(const EvalArgs& a) {
  db::Database db = open_journal(a.db);
  std::string device = tuner::this_device().fingerprint();
  int threads = pick_threads(db, device, a.threads);
  tuner::JournalFilter filter;
  filter.exclude_slow = a.ok_only;
  tuner::Journal journal = tuner::read_journal(db, device, threads, filter);
  std::vector<const tuner::JournalKernel*> used;
  for (const tuner::JournalKernel& k : journal.kernels)
    if (rankable(k)) used.push_back(&k);
  user_assert(static_cast<int>(used.size()) >= a.folds)
      << "the database '" << db.path() << "' has " << used.size()
      << " tuned kernel(s) with two or more measured plans on this device at " << threads
      << " threads; " << a.folds << "-fold cross-validation needs at least " << a.folds << ": "
      << tune_hint(db.path()) << " (or pass a smaller --folds)";
  tuner::CostModelOptions options;
  options.objective =
      a.objective == "rank" ? tuner::CostObjective::rank : tuner::CostObjective::regression;
  options.trees = a.trees;
  options.depth = a.depth;
  Evaluation e = cross_validate(used, a.folds, options);
  Summary s = summarize(used, e);
  if (a.format == OutputFormat::Json)
    print_eval_json(a, db.path(), device, threads, journal, e, s);
  else
    print_eval_text(a, db.path(), device, threads, journal, e, s);
}

} // namespace

void add_model_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd =
      app.add_subcommand("model", "The search's learned cost model, trained on the journal");
  cmd->require_subcommand(1);
  CLI::App* e = cmd->add_subcommand(
      "eval", "Cross-validate the cost model by kernel on this device's journal: how well it "
              "ranks the measured plans of kernels it was not trained on");
  e->add_option("--db", args->db, "the database (default: BEAMLAB_DB, or ~/.cache/beamlab)");
  e->add_option("--folds", args->folds, "K: kernels split into K folds, each held out once")
      ->check(CLI::Range(2, 100));
  e->add_option("--threads", args->threads,
                "the tunings at this thread count (default: the count most tunings ran at)")
      ->check(CLI::Range(1, 4096));
  e->add_option("--objective", args->objective,
                "rank (pairwise, kernels as groups) | regression (log of the slowdown over the "
                "kernel's best)")
      ->check(one_of({"rank", "regression"}));
  e->add_flag("--ok-only", args->ok_only,
              "only the plans timed to the end, not those stopped early as slow");
  e->add_option("--trees", args->trees, "boosting rounds")->check(CLI::Range(1, 10000));
  e->add_option("--depth", args->depth, "depth of each tree")->check(CLI::Range(1, 20));
  add_format_option(e, args->format);
  e->final_callback([args] { eval(*args); });
}

} // namespace beamlab::cli
